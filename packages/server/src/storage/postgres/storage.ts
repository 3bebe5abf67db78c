import { jsonEqual, type SessionEntry, type SessionHead, type Storage, type StorageReader, type WriteSet } from '@colloquy/core'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import type { FeedStorage } from '../../changes/change-feed.js'
import { parentsFirst } from '../../changes/change-log.js'
import { recordKey, type ChangeKind } from '../../changes/change-index.js'
import { writeAttachmentBytes, storedBytes } from './attachment-chunks.js'
import { attachmentBytesOf, attachmentsOf, fromDb, headOf, ownerOf, toDb, type HeadRow } from './codec.js'
import { PostgresFeed } from './feed.js'
import type { UsageSource } from '../../usage.js'
import { migrate } from './schema.js'

export interface PostgresStorageOptions {
  /** `postgres://user:password@host:port/database`; or give a `pool` of your own. */
  connectionString?: string
  pool?: pg.Pool
  /** Connections this storage opens (default 10; one of them listens for other instances). */
  maxConnections?: number
  /** The safety poll: how often an instance checks the log without a notification (default 1000 ms). */
  pollMs?: number
  /**
   * Send `NOTIFY` after each commit (default true). Without it other instances learn of commits
   * by the poll only: slower, but no cluster-wide notification lock at very high write rates.
   */
  notify?: boolean
  warn?: (message: string) => void
  /** Fault injection for crash tests: inside the n-th commit, after the version bump, before COMMIT. */
  afterVersionBump?: (commit: number) => void | Promise<void>
}

const byteSize = (v: unknown): number => Buffer.byteLength(JSON.stringify(v))

/** A record's change-log key (one record per key). */
const keyOf = (r: Rec): string =>
  recordKey({ seq: 0, kind: r.kind, session_id: r.session_id, ...(r.entry_id !== undefined && { entry_id: r.entry_id }), ...(r.attachment_id !== undefined && { attachment_id: r.attachment_id }) })

interface Rec {
  kind: ChangeKind
  session_id: string
  entry_id?: string
  attachment_id?: string
  owner: string | null
  metadata?: unknown
}

/**
 * Sessions in PostgreSQL, shared by any number of server instances. The engine runs over it as
 * over any storage; what makes several instances safe is in the database:
 *
 * - A commit locks the sessions it touches (an advisory lock per id, which also covers ids not
 *   created yet, then `SELECT … FOR UPDATE` on their heads), in one statement and a fixed order,
 *   and the engine reads those heads fresh under the lock: two instances writing one session
 *   take turns exactly as two tabs do.
 * - The change log's sequence numbers come from one clock row bumped inside the commit, last,
 *   just before COMMIT: its row lock orders commits, so a reader that sees `seq` n has seen every
 *   commit below n (a sequence would not: its values are taken before commit).
 * - After COMMIT a `NOTIFY` carrying only the new head tells other instances to read the log.
 */
export function postgresStorage(options: PostgresStorageOptions): FeedStorage & UsageSource & { readonly pool: pg.Pool } {
  if (!options.pool && !options.connectionString) throw new Error('postgresStorage: give a connectionString or a pool')
  const warn = options.warn ?? ((m: string) => console.warn(`[colloquy postgresStorage] ${m}`))
  const own = !options.pool
  const pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: options.maxConnections ?? 10 })
  // An idle connection dropped by the server (a restart) must not crash the process.
  pool.on('error', (e) => warn(`idle connection lost: ${e.message}`))
  let commits = 0
  let feed: PostgresFeed
  // Names this instance's rows in `colloquy_events` (its own events are fired by its engine).
  const origin = randomUUID()

  const readEntries = async (db: pg.ClientBase | pg.Pool, id: string): Promise<SessionEntry[]> =>
    (await db.query<{ entry: SessionEntry }>('SELECT entry FROM colloquy_entries WHERE session_id = $1 ORDER BY pos', [toDb(id)])).rows.map((r) => r.entry)

  const transact = async (work: (reader: StorageReader) => Promise<WriteSet>): Promise<void> => {
    const client = await pool.connect()
    let failed: Error | undefined
    let head = 0
    try {
      await client.query('BEGIN')
      const heads = new Map<string, SessionHead | undefined>()
      const locks = new Map<string, Promise<void>>()
      let batch: { ids: Set<string>; run: Promise<void> } | undefined
      // Heads asked for in the same tick (the engine reads all it touches at once) are locked
      // in one statement, sorted: two commits never wait on each other in a cycle.
      const lock = (id: string): Promise<void> => {
        const held = locks.get(id)
        if (held) return held
        if (!batch) {
          const ids = new Set<string>()
          const run = Promise.resolve().then(async () => {
            batch = undefined
            const keys = [...ids].map(toDb)
            await client.query('SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT DISTINCT hashtextextended(id, 0) AS k FROM unnest($1::text[]) AS id ORDER BY 1) s', [keys])
            const rows = (await client.query<HeadRow>('SELECT id, meta, leaf, v, attachments FROM colloquy_sessions WHERE id = ANY($1) ORDER BY id FOR UPDATE', [keys])).rows
            for (const id of ids) heads.set(id, undefined)
            for (const r of rows) heads.set(fromDb(r.id), headOf(r))
          })
          batch = { ids, run }
        }
        batch.ids.add(id)
        locks.set(id, batch.run)
        return batch.run
      }
      const reader: StorageReader = {
        head: async (id) => {
          await lock(id)
          return heads.get(id)
        },
        entries: (id) => readEntries(client, id),
      }
      const ws = await work(reader)
      head = await write(client, ws, reader, heads)
      await client.query('COMMIT')
    } catch (e) {
      failed = e instanceof Error ? e : new Error(String(e))
      await client.query('ROLLBACK').catch(() => {})
      throw e
    } finally {
      // A connection that failed mid-transaction may be broken: drop it rather than reuse it.
      client.release(failed)
    }
    if (head) feed.committed(head)
  }

  /** Writes one commit and its change-log records; returns the new head (0: nothing logged). */
  const write = async (client: pg.PoolClient, ws: WriteSet, reader: StorageReader, prev: Map<string, SessionHead | undefined>): Promise<number> => {
    if (!ws.deleted.size && !ws.heads.size && !ws.entries.size && !ws.side.length) return 0
    // Whatever the commit writes was read under its lock (the engine reads it; this is a guard).
    await Promise.all([...new Set([...ws.deleted, ...ws.heads.keys(), ...ws.entries.keys()])].map((id) => reader.head(id)))
    const recs: Rec[] = []
    const gone = [...ws.deleted].filter((id) => prev.get(id))
    if (gone.length) {
      const keys = gone.map(toDb)
      await client.query('DELETE FROM colloquy_changes WHERE session_id = ANY($1)', [keys])
      await client.query('DELETE FROM colloquy_entries WHERE session_id = ANY($1)', [keys])
      await client.query('DELETE FROM colloquy_attachment_chunks WHERE session_id = ANY($1)', [keys])
      await client.query('DELETE FROM colloquy_sessions WHERE id = ANY($1)', [keys])
      for (const id of gone) {
        const metadata = prev.get(id)!.meta.metadata
        recs.push({ kind: 'deleted', session_id: id, owner: ownerOf(metadata), ...(metadata && { metadata }) })
      }
    }
    const before = (id: string): SessionHead | undefined => (ws.deleted.has(id) ? undefined : prev.get(id))

    if (ws.heads.size) {
      const hs = [...ws.heads.values()]
      await client.query(
        `INSERT INTO colloquy_sessions (id, owner, meta, leaf, v, attachments)
         SELECT * FROM unnest($1::text[], $2::text[], $3::json[], $4::text[], $5::bigint[], $6::json[])
         ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, meta = EXCLUDED.meta, leaf = EXCLUDED.leaf, v = EXCLUDED.v, attachments = EXCLUDED.attachments`,
        [hs.map((h) => toDb(h.meta.session_id)), hs.map((h) => ownerOf(h.meta.metadata)), hs.map((h) => JSON.stringify(h.meta)), hs.map((h) => (h.leaf === null ? null : toDb(h.leaf))), hs.map((h) => h.v), hs.map(attachmentsOf)],
      )
    }
    // Attachment bytes in the same transaction: written before the commit that lists them
    // stands, gone with it if it fails.
    await writeAttachmentBytes(client, ws, before)
    const inserted = new Set<string>()
    // What each existing session's stored size changes by (new sessions are summed below).
    const grew = new Map<string, number>()
    const grow = (id: string, by: number): void => {
      if (by !== 0 && before(id)) grew.set(id, (grew.get(id) ?? 0) + by)
    }
    for (const [id, head] of ws.heads) {
      const old = before(id)
      if (old) grow(id, byteSize(head.meta) - byteSize(old.meta) + attachmentBytesOf(head) - attachmentBytesOf(old))
    }
    const rows = [...ws.entries].flatMap(([id, m]) => [...m.values()].map((e) => [id, e, JSON.stringify(e)] as const))
    if (rows.length) {
      // The old sizes are read in the same statement (a CTE sees the rows before the upsert).
      const res = await client.query<{ session_id: string; id: string; inserted: boolean; old: number }>(
        `WITH n AS (SELECT * FROM unnest($1::text[], $2::text[], $3::json[]) AS n(s, i, entry)),
         old AS (SELECT e.session_id, e.id, octet_length(e.entry::text) AS b FROM colloquy_entries e JOIN n ON e.session_id = n.s AND e.id = n.i),
         ins AS (INSERT INTO colloquy_entries (session_id, id, entry) SELECT s, i, entry FROM n
                 ON CONFLICT (session_id, id) DO UPDATE SET entry = EXCLUDED.entry
                 RETURNING session_id, id, (xmax = 0) AS inserted)
         SELECT ins.session_id, ins.id, ins.inserted, coalesce(old.b, 0)::int AS old FROM ins LEFT JOIN old ON old.session_id = ins.session_id AND old.id = ins.id`,
        [rows.map(([id]) => toDb(id)), rows.map(([, e]) => toDb(e.id)), rows.map(([, , text]) => text)],
      )
      const sizes = new Map(rows.map(([id, e, text]) => [`${id}\u0000${e.id}`, Buffer.byteLength(text)]))
      for (const r of res.rows) {
        const key = `${fromDb(r.session_id)}\u0000${fromDb(r.id)}`
        if (r.inserted) inserted.add(key)
        grow(fromDb(r.session_id), (sizes.get(key) ?? 0) - r.old)
      }
    }
    if (grew.size) {
      const list = [...grew]
      await client.query('UPDATE colloquy_sessions s SET bytes = s.bytes + d.by FROM unnest($1::text[], $2::bigint[]) AS d(id, by) WHERE s.id = d.id', [
        list.map(([id]) => toDb(id)),
        list.map(([, by]) => by),
      ])
    }
    const created = [...ws.heads.keys()].filter((id) => !before(id))
    if (created.length) {
      // Summed once, at creation: a bulk import may have written its entries in earlier commits.
      await client.query(
        `UPDATE colloquy_sessions s SET bytes = octet_length(s.meta::text)
           + coalesce((SELECT sum(octet_length(e.entry::text)) FROM colloquy_entries e WHERE e.session_id = s.id), 0)
           + coalesce((SELECT sum((a->>'size')::bigint) FROM json_array_elements(s.attachments) a), 0)
         WHERE s.id = ANY($1)`,
        [created.map(toDb)],
      )
    }

    // The records, in the change log's dependency order (as `ChangeLog.plan`): tombstones,
    // creations (with entries written earlier by a bulk import), entries, metas, leaves.
    const fresh = new Map<string, Set<string>>()
    const metas: Rec[] = []
    const leaves: Rec[] = []
    const owners: Array<[string, string | null]> = []
    // Records of another key that a record of this commit replaces (an attachment's and its detach).
    const superseded: string[] = []
    for (const [id, head] of ws.heads) {
      const owner = ownerOf(head.meta.metadata)
      const old = before(id)
      if (!old) {
        const added = new Set<string>()
        fresh.set(id, added)
        recs.push({ kind: 'created', session_id: id, owner })
        // A fork's (or an import's) attachments come right after its creation, before its entries.
        for (const a of head.attachments ?? []) recs.push({ kind: 'attachment', session_id: id, attachment_id: a.attachment_id, owner })
        // Draft chips name attachments logged after the creation: a meta record follows them.
        if (head.meta.draft_attachments?.length) metas.push({ kind: 'meta', session_id: id, owner })
        const inCommit = ws.entries.get(id)
        if (head.leaf !== null && !inCommit?.has(head.leaf)) {
          for (const entry of parentsFirst(await readEntries(client, id))) {
            if (inCommit?.has(entry.id)) continue
            recs.push({ kind: 'added', session_id: id, entry_id: entry.id, owner })
            added.add(entry.id)
          }
        }
        if (head.leaf !== null) leaves.push({ kind: 'leaf', session_id: id, owner })
        continue
      }
      if (ownerOf(old.meta.metadata) !== owner) owners.push([id, owner])
      if (!jsonEqual(old.meta, head.meta)) metas.push({ kind: 'meta', session_id: id, owner })
      if (old.leaf !== head.leaf) leaves.push({ kind: 'leaf', session_id: id, owner })
      // Attachments before the entries of the same commit (a message may reference them): a new
      // one gets its record now and keeps it; a deleted one's record becomes `detached`.
      const list = head.attachments ?? []
      const was = new Map((old.attachments ?? []).map((a) => [a.attachment_id, a]))
      for (const a of list) {
        if (was.get(a.attachment_id)?.sha256 === a.sha256) continue
        recs.push({ kind: 'attachment', session_id: id, attachment_id: a.attachment_id, owner })
        superseded.push(keyOf({ kind: 'detached', session_id: id, attachment_id: a.attachment_id, owner }))
      }
      const now = new Set(list.map((a) => a.attachment_id))
      for (const a_id of was.keys()) {
        if (now.has(a_id)) continue
        recs.push({ kind: 'detached', session_id: id, attachment_id: a_id, owner })
        superseded.push(keyOf({ kind: 'attachment', session_id: id, attachment_id: a_id, owner }))
      }
    }
    for (const [id, entries] of ws.entries) {
      const added = fresh.get(id)
      const head = ws.heads.get(id) ?? before(id)
      // Entries of a session that has no head yet (bulk import chunks) are logged with it.
      if (!head) continue
      const owner = ownerOf(head.meta.metadata)
      for (const entry of entries.values()) {
        if (added?.has(entry.id)) continue
        const isNew = added !== undefined || inserted.has(`${id}\u0000${entry.id}`)
        recs.push({ kind: isNew ? 'added' : 'updated', session_id: id, entry_id: entry.id, owner })
        added?.add(entry.id)
      }
    }
    recs.push(...metas, ...leaves)

    for (const [id, owner] of owners) await client.query('UPDATE colloquy_changes SET owner = $2 WHERE session_id = $1', [toDb(id), owner])
    for (const w of ws.side) {
      if (w.value === undefined) {
        if (w.key !== undefined) await client.query('DELETE FROM colloquy_side WHERE store = $1 AND key = $2', [w.store, String(w.key)])
      } else if (w.key === undefined) {
        await client.query("INSERT INTO colloquy_side (store, key, value) VALUES ($1, lpad(nextval('colloquy_side_key')::text, 20, '0'), $2)", [w.store, JSON.stringify(w.value)])
      } else {
        await client.query('INSERT INTO colloquy_side (store, key, value) VALUES ($1, $2, $3) ON CONFLICT (store, key) DO UPDATE SET value = EXCLUDED.value', [w.store, String(w.key), JSON.stringify(w.value)])
      }
    }
    if (!recs.length) return 0
    if (superseded.length) await client.query('DELETE FROM colloquy_changes WHERE key = ANY($1)', [superseded.map(toDb)])

    // One record per key: a later record of the same key in this commit replaces an earlier one.
    const byKey = new Map<string, Rec>()
    for (const r of recs) {
      const key = keyOf(r)
      byKey.delete(key)
      byKey.set(key, r)
    }
    const n = byKey.size
    // The version bump: last, so the clock row's lock is held only for the rest of the commit.
    const head = Number((await client.query<{ head: string }>('UPDATE colloquy_clock SET head = head + $1 WHERE id = 1 RETURNING head', [n])).rows[0].head)
    const first = head - n + 1
    const list = [...byKey]
    await client.query(
      `INSERT INTO colloquy_changes (key, seq, kind, session_id, entry_id, owner, metadata, attachment_id)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::json[], $8::text[])
       ON CONFLICT (key) DO UPDATE SET seq = EXCLUDED.seq, owner = EXCLUDED.owner, metadata = EXCLUDED.metadata`,
      [
        list.map(([k]) => toDb(k)),
        list.map((_, i) => first + i),
        list.map(([, r]) => r.kind),
        list.map(([, r]) => toDb(r.session_id)),
        list.map(([, r]) => (r.entry_id === undefined ? null : toDb(r.entry_id))),
        list.map(([, r]) => r.owner),
        list.map(([, r]) => (r.metadata === undefined ? null : JSON.stringify(r.metadata))),
        list.map(([, r]) => (r.attachment_id === undefined ? null : toDb(r.attachment_id))),
      ],
    )
    if (ws.events?.length) {
      await client.query('INSERT INTO colloquy_events (seq, origin, events) VALUES ($1, $2, $3)', [head, origin, JSON.stringify(ws.events)])
      // Only live sockets need them: old ones go now and then.
      if (commits % 256 === 0) await client.query("DELETE FROM colloquy_events WHERE at < now() - interval '10 minutes'")
    }
    await options.afterVersionBump?.(++commits)
    return head
  }

  const storage: FeedStorage & UsageSource & { readonly pool: pg.Pool } = {
    name: 'postgres',
    pool,
    async open() {
      await migrate(pool)
      await feed.start()
      const rows = (await pool.query<HeadRow>('SELECT id, meta, leaf, v, attachments FROM colloquy_sessions')).rows
      return rows.map(headOf)
    },
    entries: (id) => readEntries(pool, id),
    transact,
    attachmentBytes: (session_id, attachment_id) => storedBytes(pool, session_id, attachment_id),
    async sideRecords(store) {
      const rows = (await pool.query<{ key: string; value: unknown }>('SELECT key, value FROM colloquy_side WHERE store = $1 ORDER BY key', [store])).rows
      return rows.map((r) => ({ key: r.key, value: r.value }))
    },
    changeFeed: () => feed,
    async usageOf(owner) {
      const r = (await pool.query<{ sessions: number; bytes: string }>('SELECT count(*)::int AS sessions, coalesce(sum(bytes), 0)::bigint AS bytes FROM colloquy_sessions WHERE $1::text IS NULL OR owner = $1', [owner])).rows[0]
      return { sessions: r.sessions, bytes: Number(r.bytes) }
    },
    async sessionBytes(id) {
      const r = (await pool.query<{ bytes: string }>('SELECT bytes FROM colloquy_sessions WHERE id = $1', [toDb(id)])).rows[0]
      return r ? Number(r.bytes) : 0
    },
    close() {
      feed.close()
      if (own) void pool.end().catch(() => {})
    },
  }
  feed = new PostgresFeed(storage, pool, { pollMs: options.pollMs ?? 1000, notify: options.notify ?? true, warn, origin })
  return storage
}
