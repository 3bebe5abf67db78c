import type {
  AttachmentMeta,
  JsonObject,
  ReplicaChange,
  SessionEntry,
  SessionHead,
  StorageReader,
  WriteSet,
} from '@colloquy/core'
import { jsonEqual } from '@colloquy/core/host'
import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import type pg from 'pg'
import type { FeedStorage } from '../../changes/change-feed.js'
import type { CommittedChange } from '../../changes/change-log.js'
import { parentsFirst } from '@colloquy/core/protocol'
import { recordKey, type ChangeKind } from '../../changes/change-index.js'
import { writeAttachmentBytes, storedBytes } from './attachment-chunks.js'
import { arrayParam, textParam } from './binary-params.js'
import { attachmentBytesOf, attachmentsOf, fromDb, headOf, ownerOf, toDb, type HeadRow } from './codec.js'
import { CHANNEL, PostgresFeed } from './feed.js'
import {
  digestOf,
  digestSql,
  HEAD_TEXTS,
  HeadCache,
  TEXTS_PER_READ,
  type HeadDigestRow,
  type HeadTextRow,
} from './head-cache.js'
import { postgresPages } from './pages.js'
import type { UsageSource } from '../../usage.js'
import { migrate } from './schema.js'
import { slicer, WORK_BUDGETS } from '../../work.js'
import { entryDoc, titleDoc } from '../../search/search-doc.js'
import { postgresFullText } from '../../search/postgres-search.js'
import {
  applyStagedTermCounts,
  beginStaging,
  stageTermRowsSql,
  termCountsSql,
} from '../../search/term-counts.js'
import type { FullTextSource } from '../../search/server-search.js'

export interface PostgresStorageOptions {
  /** `postgres://user:password@host:port/database`; or give a `pool` of your own. */
  connectionString?: string
  pool?: pg.Pool
  /** Connections this storage opens (default 10; one of them listens for other instances). */
  maxConnections?: number
  /** The safety poll: how often an instance checks the log without a notification (default 1000 ms). */
  pollMs?: number
  /**
   * Send `NOTIFY` with each commit (default true). Without it other instances learn of commits
   * by the poll only: slower, but no cluster-wide notification lock at very high write rates.
   */
  notify?: boolean
  warn?: (message: string) => void
  /**
   * Serve heads on demand (`Storage.paged`, default true): `open` reads no head, and the
   * engine holds a bounded working set of them (`createServer({ maxHeads })`). False reads
   * every head at open, as before.
   */
  paged?: boolean
  /** Fault injection for crash tests: inside the n-th commit, after the version bump, before COMMIT. */
  afterVersionBump?: (commit: number) => void | Promise<void>
}

type Usage = { sessions: number; bytes: number }

/** Quota counts one instance runs at once (the rest of its pool is for commits and reads). */
const MAX_COUNTS = 3

const byteSize = (v: unknown): number => Buffer.byteLength(JSON.stringify(v))

/** A record's change-log key (one record per key). */
const keyOf = (r: Pick<Rec, 'kind' | 'session_id' | 'entry_id' | 'attachment_id'>): string =>
  recordKey({
    seq: 0,
    kind: r.kind,
    session_id: r.session_id,
    ...(r.entry_id !== undefined && { entry_id: r.entry_id }),
    ...(r.attachment_id !== undefined && { attachment_id: r.attachment_id }),
  })

// A commit's statements are few because each is a round trip, and on a busy machine a round
// trip (two processes scheduled in turn) costs milliseconds: that, not the database's work, is
// what bounds commits per second. So each statement below does all it can.

/**
 * Locks the sessions a commit touches and reads their heads (`colloquy_lock_heads`, schema.ts):
 * the digests of their texts, which `HeadCache` knows for the heads it read or wrote last.
 */
const LOCK_HEADS = `SELECT sid AS id, ${digestSql('smeta')} AS meta, sleaf AS leaf, sv AS v, ${digestSql('sattachments')} AS attachments FROM colloquy_lock_heads($1::text[])`

/**
 * Entries and heads in one statement. Entries are upserted, telling new from replaced ones and
 * the old sizes (the CTEs see the rows as they were before the statement). Heads are upserted
 * with their stored size: a new session's is its meta, its attachments' sizes, the entries an
 * earlier bulk-import commit wrote and this commit's (`$10` true); an existing one's grows by the
 * meta's and the attachments' difference (`$9`, from the heads read under the lock) and its
 * entries' (added on conflict). Sessions whose
 * entries change without a new head (none the engine writes today) are sized by `g`. What the
 * documents add to and take from their owners' term counts is staged inside the transaction
 * (`stageTermRowsSql`), not returned: only the ids of the entries it inserted come back. A head
 * written with the title and owner it had (every append moves the leaf) leaves its title's
 * counts alone: it would take one document away and add the same one back.
 */
const WRITE_DATA = `WITH n AS (SELECT n.s, n.i, n.entry, n.terms::tsvector AS terms, (n.doc->>'len')::int AS len, n.doc->>'role' AS role,
          (n.doc->>'ts')::float8 AS ts, n.doc->>'parent' AS parent
        FROM unnest($1::text[], $2::text[], $3::json[], $12::text[], $13::json[]) AS n(s, i, entry, terms, doc)),
  old AS (SELECT e.session_id, e.id, octet_length(e.entry::text) AS b, e.len AS l, e.terms FROM colloquy_entries e JOIN n ON e.session_id = n.s AND e.id = n.i),
  ins AS (INSERT INTO colloquy_entries (session_id, id, entry, terms, len, role, ts, parent) SELECT s, i, entry, terms, len, role, ts, parent FROM n
          ON CONFLICT (session_id, id) DO UPDATE SET entry = EXCLUDED.entry, terms = EXCLUDED.terms, len = EXCLUDED.len, role = EXCLUDED.role, ts = EXCLUDED.ts, parent = EXCLUDED.parent
          RETURNING session_id, id, (xmax = 0) AS inserted),
  d AS (SELECT n.s AS id, sum(octet_length(n.entry::text) - coalesce(old.b, 0))::bigint AS by,
          sum((n.len IS NOT NULL)::int - (old.l IS NOT NULL)::int)::bigint AS dn, sum(coalesce(n.len, 0) - coalesce(old.l, 0))::bigint AS dl
        FROM n LEFT JOIN old ON old.session_id = n.s AND old.id = n.i GROUP BY n.s),
  h AS (INSERT INTO colloquy_sessions (id, owner, meta, leaf, v, attachments, bytes, title_terms, title_len, search_docs, search_len)
        SELECT h.id, h.owner, h.meta, h.leaf, h.v, h.attachments, h.base + coalesce(d.by, 0)
          + CASE WHEN h.created THEN coalesce((SELECT sum(octet_length(e.entry::text)) FROM colloquy_entries e WHERE e.session_id = h.id), 0) ELSE 0 END,
          h.title_terms::tsvector, h.title_len, coalesce(d.dn, 0) + CASE WHEN h.created THEN (SELECT count(e.len) FROM colloquy_entries e WHERE e.session_id = h.id) ELSE 0 END,
          coalesce(d.dl, 0) + CASE WHEN h.created THEN coalesce((SELECT sum(e.len) FROM colloquy_entries e WHERE e.session_id = h.id), 0) ELSE 0 END
        FROM unnest($4::text[], $5::text[], $6::json[], $7::text[], $8::bigint[], $9::bigint[], $10::boolean[], $11::json[], $14::text[], $15::bigint[]) AS h(id, owner, meta, leaf, v, base, created, attachments, title_terms, title_len)
        LEFT JOIN d ON d.id = h.id
        ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, meta = EXCLUDED.meta, leaf = EXCLUDED.leaf, v = EXCLUDED.v, attachments = EXCLUDED.attachments, bytes = colloquy_sessions.bytes + EXCLUDED.bytes,
          title_terms = EXCLUDED.title_terms, title_len = EXCLUDED.title_len, search_docs = colloquy_sessions.search_docs + EXCLUDED.search_docs, search_len = colloquy_sessions.search_len + EXCLUDED.search_len),
  g AS (UPDATE colloquy_sessions s SET bytes = s.bytes + d.by, search_docs = s.search_docs + d.dn, search_len = s.search_len + d.dl
        FROM d WHERE s.id = d.id AND (d.by <> 0 OR d.dn <> 0 OR d.dl <> 0) AND NOT (s.id = ANY($4::text[]))),
  sess AS (SELECT x.id, s.owner AS was, s.id IS NOT NULL AS existed, h.id IS NOT NULL AS headed, h.owner AS now,
          s.title_terms AS old_title, h.title_terms::tsvector AS new_title, h.id IS NOT NULL AND (s.id IS NULL OR s.owner IS DISTINCT FROM h.owner) AS whole,
          s.id IS NOT NULL AND h.id IS NOT NULL AND s.owner IS NOT DISTINCT FROM h.owner AND s.title_terms IS NOT DISTINCT FROM h.title_terms::tsvector AS same_title
        FROM (SELECT n.s AS id FROM n UNION SELECT unnest($4::text[])) x LEFT JOIN colloquy_sessions s ON s.id = x.id
        LEFT JOIN unnest($4::text[], $5::text[], $14::text[]) AS h(id, owner, title_terms) ON h.id = x.id),
  docs AS (SELECT sess.was AS owner, old.terms, -1 AS sign FROM old JOIN sess ON sess.id = old.session_id WHERE sess.existed AND NOT sess.whole
    UNION ALL SELECT sess.was, e.terms, -1 FROM sess JOIN colloquy_entries e ON e.session_id = sess.id WHERE sess.whole AND sess.existed
    UNION ALL SELECT sess.was, sess.old_title, -1 FROM sess WHERE sess.existed AND sess.headed AND NOT sess.same_title
    UNION ALL SELECT CASE WHEN sess.headed THEN sess.now ELSE sess.was END, n.terms, 1 FROM n JOIN sess ON sess.id = n.s WHERE sess.existed OR sess.headed
    UNION ALL SELECT sess.now, e.terms, 1 FROM sess JOIN colloquy_entries e ON e.session_id = sess.id
      WHERE sess.whole AND NOT EXISTS (SELECT 1 FROM n WHERE n.s = e.session_id AND n.i = e.id)
    UNION ALL SELECT sess.now, sess.new_title, 1 FROM sess WHERE sess.headed AND NOT sess.same_title),
  staged AS (${stageTermRowsSql('docs')})
  SELECT ins.session_id, ins.id FROM ins WHERE ins.inserted`

/**
 * A deleted session's documents leave its owner's term counts, in the statement that deletes its
 * entries (the session's row, its owner and title, goes after it).
 */
const DELETE_ENTRIES = `WITH gone AS (DELETE FROM colloquy_entries WHERE session_id = ANY($1) RETURNING session_id, terms)
  ${stageTermRowsSql(`(SELECT s.owner, gone.terms, -1 AS sign FROM gone JOIN colloquy_sessions s ON s.id = gone.session_id
    UNION ALL SELECT owner, title_terms, -1 FROM colloquy_sessions WHERE id = ANY($1))`)}`

/**
 * The version bump and what depends on it, in one statement, last in the commit: the clock
 * row's lock (which orders all commits) is held from here to COMMIT only. The records take the
 * `seq`s below the new head in order; the events are kept under the head; the `NOTIFY` (a hint
 * carrying the head, `$10`) is delivered by PostgreSQL at COMMIT, never before, and never for a
 * commit that does not happen. Its commit-time lock adds no waiting: commits already take turns
 * on the clock row until they end. The commit's term counts are written here too, under that
 * lock, from what its statements staged (`termCountsSql`): one round trip less per commit that
 * changes them.
 */
const WRITE_LOG = `WITH k AS (UPDATE colloquy_clock SET head = head + cardinality($1::text[]) WHERE id = 1 RETURNING head),
  c AS (INSERT INTO colloquy_changes (key, seq, kind, session_id, entry_id, owner, metadata, attachment_id)
        SELECT r.key, (SELECT head FROM k) - cardinality($1::text[]) + r.o, r.kind, r.session_id, r.entry_id, r.owner, r.metadata, r.attachment_id
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::json[], $11::text[]) WITH ORDINALITY AS r(key, kind, session_id, entry_id, owner, metadata, attachment_id, o)
        ON CONFLICT (key) DO UPDATE SET seq = EXCLUDED.seq, owner = EXCLUDED.owner, metadata = EXCLUDED.metadata),
  e AS (INSERT INTO colloquy_events (seq, origin, events) SELECT head, $7, $8::json FROM k WHERE $8::json IS NOT NULL),
  ${termCountsSql('k')}
  SELECT head, CASE WHEN $9::boolean THEN pg_notify($10, head::text) END AS notified FROM k`

interface Rec {
  kind: ChangeKind
  session_id: string
  entry_id?: string
  attachment_id?: string
  owner: string | null
  metadata?: JsonObject
  /** What the record serves, as of this commit: the feed hands it to this instance's streams. */
  change: ReplicaChange
}

/**
 * The `pg` driver, loaded when a PostgreSQL storage is made rather than when the server is
 * imported: it is about a quarter of the server's import time, which every start over the file
 * or memory storage paid for nothing. Required, not imported, so this stays synchronous.
 */
const driver = (): typeof pg => createRequire(import.meta.url)('pg') as typeof pg

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
 * - A `NOTIFY` carrying only the new head, delivered at COMMIT, tells other instances to read the log.
 */
export function postgresStorage(
  options: PostgresStorageOptions,
): FeedStorage & UsageSource & FullTextSource & { readonly pool: pg.Pool } {
  if (!options.pool && !options.connectionString)
    throw new Error('postgresStorage: give a connectionString or a pool')
  const warn = options.warn ?? ((m: string) => console.warn(`[colloquy postgresStorage] ${m}`))
  const own = !options.pool
  const notify = options.notify ?? true
  const pool =
    options.pool ??
    new (driver().Pool)({ connectionString: options.connectionString, max: options.maxConnections ?? 10 })
  // An idle connection dropped by the server (a restart) must not crash the process.
  pool.on('error', (e) => warn(`idle connection lost: ${e.message}`))
  let commits = 0
  // eslint-disable-next-line prefer-const -- assigned at the end, once the storage it serves exists; closures here read it
  let feed: PostgresFeed
  // Names this instance's rows in `colloquy_events` (its own events are fired by its engine).
  const origin = randomUUID()
  const known = new HeadCache()

  const readEntries = async (db: pg.ClientBase | pg.Pool, id: string): Promise<SessionEntry[]> =>
    (
      await db.query<{ entry: SessionEntry }>(
        'SELECT entry FROM colloquy_entries WHERE session_id = $1 ORDER BY pos',
        [toDb(id)],
      )
    ).rows.map((r) => r.entry)

  const transact = async (work: (reader: StorageReader) => Promise<WriteSet>): Promise<void> => {
    const client = await pool.connect()
    let failed: Error | undefined
    let logged: CommittedChange[]
    // The first `seq` the commit took, once it took them (the feed reads below it meanwhile).
    const took: { first?: number } = {}
    try {
      await beginStaging(client)
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
            const rows = (await client.query<HeadDigestRow>(LOCK_HEADS, [keys])).rows
            for (const id of ids) heads.set(id, undefined)
            const unknown: string[] = []
            for (const r of rows) {
              const head = known.match(r)
              if (head) heads.set(fromDb(r.id), head)
              else unknown.push(r.id)
            }
            // The others' texts (rows this transaction holds locked), parsed in slices.
            const parsed = slicer()
            for (let i = 0; i < unknown.length; i += TEXTS_PER_READ) {
              const texts = (
                await client.query<HeadTextRow>(HEAD_TEXTS, [unknown.slice(i, i + TEXTS_PER_READ)])
              ).rows
              for (const r of texts) {
                heads.set(fromDb(r.id), known.read(r))
                await parsed(r.meta.length + (r.attachments?.length ?? 0))
              }
            }
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
      logged = await write(client, ws, reader, heads, took)
      await client.query('COMMIT')
    } catch (e) {
      failed = e instanceof Error ? e : new Error(String(e))
      await client.query('ROLLBACK').catch(() => {})
      if (took.first !== undefined) feed.abandoned(took.first)
      throw e
    } finally {
      // A connection that failed mid-transaction may be broken: drop it rather than reuse it.
      client.release(failed)
    }
    if (logged.length) feed.committed(logged)
  }

  /** Writes one commit and its change-log records; returns them as logged (none: nothing logged). */
  const write = async (
    client: pg.PoolClient,
    ws: WriteSet,
    reader: StorageReader,
    prev: Map<string, SessionHead | undefined>,
    took: { first?: number },
  ): Promise<CommittedChange[]> => {
    if (!ws.deleted.size && !ws.heads.size && !ws.entries.size && !ws.side.length) return []
    // Whatever the commit writes was read under its lock (the engine reads it; this is a guard).
    await Promise.all(
      [...new Set([...ws.deleted, ...ws.heads.keys(), ...ws.entries.keys()])].map((id) => reader.head(id)),
    )
    const recs: Rec[] = []
    // Whether a statement staged changes to the term counts (applied once, last: term-counts.ts).
    let staged = false
    const gone = [...ws.deleted].filter((id) => prev.get(id))
    if (gone.length) {
      const keys = gone.map(toDb)
      await client.query('DELETE FROM colloquy_changes WHERE session_id = ANY($1)', [keys])
      await client.query(DELETE_ENTRIES, [keys])
      staged = true
      await client.query('DELETE FROM colloquy_attachment_chunks WHERE session_id = ANY($1)', [keys])
      await client.query('DELETE FROM colloquy_sessions WHERE id = ANY($1)', [keys])
      for (const k of keys) known.forget(k)
      for (const id of gone) {
        const metadata = prev.get(id)!.meta.metadata
        recs.push({
          kind: 'deleted',
          session_id: id,
          owner: ownerOf(metadata),
          ...(metadata && { metadata }),
          change: { type: 'delete', session_id: id },
        })
      }
    }
    const before = (id: string): SessionHead | undefined => (ws.deleted.has(id) ? undefined : prev.get(id))

    const inserted = new Set<string>()
    // The JSON of a large commit is built in slices, other requests served between them
    // (inside the transaction: nothing of it is visible before its COMMIT).
    const built = slicer()
    // Each head's meta in characters of JSON: what comparing it with the old one costs, below.
    const metaChars = new Map<string, number>()
    if (ws.heads.size || ws.entries.size) {
      // Written in statements of about a pull page of JSON each, every one holding all the rows
      // of its sessions (each statement's per-session sums see the sessions whole, as one
      // statement would): a 1 MB push's rows (with its sessions' metas) are several megabytes,
      // and each statement's parameters are built whole (in slices, `binary-params.ts`) before
      // it is sent.
      let chunk:
        | {
            entries: Array<[string, SessionEntry]>
            entryJson: string[]
            heads: SessionHead[]
            metaJson: string[]
            attachments: Array<string | null>
            /** Digests of `metaJson` and `attachments`: what `HeadCache` remembers of them. */
            digests: Array<[string, string | null]>
            sizes: number[]
            /** Full text: each entry's terms and row fields, each head's title (`search-doc.ts`). */
            terms: Array<string | null>
            docs: string[]
            titles: Array<{ terms: string; len: number } | null>
            chars: number
          }
        | undefined
      const flush = async (): Promise<void> => {
        if (!chunk) return
        const {
          entries,
          entryJson,
          heads: hs,
          metaJson,
          attachments,
          digests,
          sizes,
          terms,
          docs,
          titles,
        } = chunk
        chunk = undefined
        // Built here in slices, as binary parameters: the driver has nothing left to encode.
        const params = [
          await arrayParam(
            'text',
            entries.map(([id]) => toDb(id)),
            built,
          ),
          await arrayParam(
            'text',
            entries.map(([, e]) => toDb(e.id)),
            built,
          ),
          await arrayParam('json', entryJson, built),
          await arrayParam(
            'text',
            hs.map((h) => toDb(h.meta.session_id)),
            built,
          ),
          await arrayParam(
            'text',
            hs.map((h) => ownerOf(h.meta.metadata)),
            built,
          ),
          await arrayParam('json', metaJson, built),
          await arrayParam(
            'text',
            hs.map((h) => (h.leaf === null ? null : toDb(h.leaf))),
            built,
          ),
          await arrayParam(
            'int8',
            hs.map((h) => h.v),
            built,
          ),
          await arrayParam('int8', sizes, built),
          await arrayParam(
            'bool',
            hs.map((h) => !before(h.meta.session_id)),
            built,
          ),
          await arrayParam('json', attachments, built),
          await arrayParam('text', terms, built),
          await arrayParam('json', docs, built),
          await arrayParam(
            'text',
            titles.map((t) => t?.terms ?? null),
            built,
          ),
          await arrayParam(
            'int8',
            titles.map((t) => t?.len ?? null),
            built,
          ),
        ]
        const res = await client.query<{ session_id: string; id: string }>(WRITE_DATA, params)
        staged = true
        for (const r of res.rows) inserted.add(`${fromDb(r.session_id)}\u0000${fromDb(r.id)}`)
        // Read back under the next commit's lock, these rows give these very heads (HeadCache).
        for (let i = 0; i < hs.length; i++)
          known.wrote(
            toDb(hs[i].meta.session_id),
            hs[i],
            digests[i][0],
            digests[i][1],
            hs[i].leaf === null ? null : toDb(hs[i].leaf!),
          )
      }
      for (const id of new Set([...ws.entries.keys(), ...ws.heads.keys()])) {
        chunk ??= {
          entries: [],
          entryJson: [],
          heads: [],
          metaJson: [],
          attachments: [],
          digests: [],
          sizes: [],
          terms: [],
          docs: [],
          titles: [],
          chars: 0,
        }
        for (const e of ws.entries.get(id)?.values() ?? []) {
          const json = JSON.stringify(e)
          chunk.entries.push([id, e])
          chunk.entryJson.push(json)
          const doc = entryDoc(e, e.parent_id === null ? null : toDb(e.parent_id))
          chunk.terms.push(doc.terms)
          chunk.docs.push(JSON.stringify({ ...doc, terms: undefined }))
          chunk.chars += json.length
          // Encoded, and tokenized (about as long again).
          await built(2 * json.length)
        }
        const h = ws.heads.get(id)
        if (h) {
          const json = JSON.stringify(h.meta)
          metaChars.set(id, json.length)
          chunk.heads.push(h)
          chunk.metaJson.push(json)
          chunk.titles.push(titleDoc(h.meta))
          const attachments = attachmentsOf(h)
          chunk.attachments.push(attachments)
          chunk.digests.push([digestOf(json), attachments === null ? null : digestOf(attachments)])
          // What each head's stored size starts from (see WRITE_DATA).
          const old = before(id)
          chunk.sizes.push(
            Buffer.byteLength(json) +
              attachmentBytesOf(h) -
              (old ? byteSize(old.meta) + attachmentBytesOf(old) : 0),
          )
          chunk.chars += json.length
          // Encoded, measured and digested.
          await built(3 * json.length + (attachments?.length ?? 0))
        }
        if (chunk.chars >= WORK_BUDGETS.pullChars) await flush()
      }
      await flush()
    }
    // Attachment bytes in the same transaction: written before the commit that lists them
    // stands, gone with it if it fails.
    await writeAttachmentBytes(client, ws, before)

    // The records, in the change log's dependency order (as `ChangeLog.plan`): tombstones,
    // creations (with entries written earlier by a bulk import), entries, metas, leaves.
    const fresh = new Map<string, Set<string>>()
    const metas: Rec[] = []
    const leaves: Rec[] = []
    const owners: Array<[string, string | null]> = []
    // Records of another key that a record of this commit replaces (an attachment's and its detach).
    const superseded: string[] = []
    const attachmentRec = (id: string, a: AttachmentMeta, owner: string | null): Rec => ({
      kind: 'attachment',
      session_id: id,
      attachment_id: a.attachment_id,
      owner,
      change: { type: 'attachment', session_id: id, attachment: a },
    })
    for (const [id, head] of ws.heads) {
      const owner = ownerOf(head.meta.metadata)
      const old = before(id)
      if (!old) {
        const added = new Set<string>()
        fresh.set(id, added)
        const metaChange: ReplicaChange = { type: 'meta', meta: head.meta }
        const leafChange: ReplicaChange = { type: 'leaf', session_id: id, entry_id: head.leaf }
        recs.push({ kind: 'created', session_id: id, owner, change: metaChange })
        // A fork's (or an import's) attachments come right after its creation, before its entries.
        for (const a of head.attachments ?? []) recs.push(attachmentRec(id, a, owner))
        // Draft chips name attachments logged after the creation: a meta record follows them.
        if (head.meta.draft_attachments?.length)
          metas.push({ kind: 'meta', session_id: id, owner, change: metaChange })
        const inCommit = ws.entries.get(id)
        if (head.leaf !== null && !inCommit?.has(head.leaf)) {
          for (const entry of parentsFirst(await readEntries(client, id))) {
            if (inCommit?.has(entry.id)) continue
            recs.push({
              kind: 'added',
              session_id: id,
              entry_id: entry.id,
              owner,
              change: { type: 'entry', session_id: id, entry },
            })
            added.add(entry.id)
          }
        }
        if (head.leaf !== null) leaves.push({ kind: 'leaf', session_id: id, owner, change: leafChange })
        continue
      }
      if (ownerOf(old.meta.metadata) !== owner) owners.push([id, owner])
      await built(metaChars.get(id) ?? 0)
      if (!jsonEqual(old.meta, head.meta))
        metas.push({ kind: 'meta', session_id: id, owner, change: { type: 'meta', meta: head.meta } })
      if (old.leaf !== head.leaf)
        leaves.push({
          kind: 'leaf',
          session_id: id,
          owner,
          change: { type: 'leaf', session_id: id, entry_id: head.leaf },
        })
      // Attachments before the entries of the same commit (a message may reference them): a new
      // one gets its record now and keeps it; a deleted one's record becomes `detached`.
      const list = head.attachments ?? []
      const was = new Map((old.attachments ?? []).map((a) => [a.attachment_id, a]))
      for (const a of list) {
        if (was.get(a.attachment_id)?.sha256 === a.sha256) continue
        recs.push(attachmentRec(id, a, owner))
        superseded.push(keyOf({ kind: 'detached', session_id: id, attachment_id: a.attachment_id }))
      }
      const now = new Set(list.map((a) => a.attachment_id))
      for (const a_id of was.keys()) {
        if (now.has(a_id)) continue
        recs.push({
          kind: 'detached',
          session_id: id,
          attachment_id: a_id,
          owner,
          change: { type: 'detach', session_id: id, attachment_id: a_id },
        })
        superseded.push(keyOf({ kind: 'attachment', session_id: id, attachment_id: a_id }))
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
        recs.push({
          kind: isNew ? 'added' : 'updated',
          session_id: id,
          entry_id: entry.id,
          owner,
          change: { type: 'entry', session_id: id, entry },
        })
        added?.add(entry.id)
      }
    }
    recs.push(...metas, ...leaves)

    for (const [id, owner] of owners)
      await client.query('UPDATE colloquy_changes SET owner = $2 WHERE session_id = $1', [toDb(id), owner])
    for (const w of ws.side) {
      if (w.value === undefined) {
        if (w.key !== undefined)
          await client.query('DELETE FROM colloquy_side WHERE store = $1 AND key = $2', [
            w.store,
            String(w.key),
          ])
      } else if (w.key === undefined) {
        await client.query(
          "INSERT INTO colloquy_side (store, key, value) VALUES ($1, lpad(nextval('colloquy_side_key')::text, 20, '0'), $2)",
          [w.store, JSON.stringify(w.value)],
        )
      } else {
        await client.query(
          'INSERT INTO colloquy_side (store, key, value) VALUES ($1, $2, $3) ON CONFLICT (store, key) DO UPDATE SET value = EXCLUDED.value',
          [w.store, String(w.key), JSON.stringify(w.value)],
        )
      }
    }
    if (!recs.length) {
      if (staged) await applyStagedTermCounts(client)
      return []
    }
    if (superseded.length)
      await client.query('DELETE FROM colloquy_changes WHERE key = ANY($1)', [superseded.map(toDb)])

    // One record per key: a later record of the same key in this commit replaces an earlier one.
    const byKey = new Map<string, Rec>()
    for (const r of recs) {
      const key = keyOf(r)
      byKey.delete(key)
      byKey.set(key, r)
    }
    const list = [...byKey]
    // A push's events (one per change, each with its session's metadata) are megabytes of JSON
    // for a 1 MB push: encoded in slices too.
    let eventsJson: Buffer | null = null
    if (ws.events?.length) {
      const parts: string[] = []
      for (const e of ws.events) {
        const json = JSON.stringify(e)
        parts.push(json)
        await built(json.length)
      }
      eventsJson = await textParam(parts, built, { open: '[', sep: ',', close: ']' })
    }
    const metadata: Array<string | null> = []
    for (const [, r] of list) {
      const json = r.metadata === undefined ? null : JSON.stringify(r.metadata)
      metadata.push(json)
      await built(json?.length ?? 0)
    }
    const params = [
      await arrayParam(
        'text',
        list.map(([k]) => toDb(k)),
        built,
      ),
      await arrayParam(
        'text',
        list.map(([, r]) => r.kind),
        built,
      ),
      await arrayParam(
        'text',
        list.map(([, r]) => toDb(r.session_id)),
        built,
      ),
      await arrayParam(
        'text',
        list.map(([, r]) => (r.entry_id === undefined ? null : toDb(r.entry_id))),
        built,
      ),
      await arrayParam(
        'text',
        list.map(([, r]) => r.owner),
        built,
      ),
      await arrayParam('json', metadata, built),
      origin,
      eventsJson,
      notify,
      CHANNEL,
      await arrayParam(
        'text',
        list.map(([, r]) => (r.attachment_id === undefined ? null : toDb(r.attachment_id))),
        built,
      ),
    ]
    const head = Number((await client.query<{ head: string }>(WRITE_LOG, params)).rows[0].head)
    took.first = head - list.length + 1
    feed.took(took.first)
    // Only live sockets need the events: old ones go now and then. (Counted here: the hook's
    // argument below is not evaluated when there is no hook.)
    commits++
    if (ws.events?.length && commits % 256 === 0)
      await client.query("DELETE FROM colloquy_events WHERE at < now() - interval '10 minutes'")
    await options.afterVersionBump?.(commits)
    const first = head - list.length + 1
    return list.map(([, r], i) => ({
      seq: first + i,
      change: r.change,
      metadata:
        r.kind === 'deleted'
          ? r.metadata
          : (ws.heads.get(r.session_id) ?? before(r.session_id))?.meta.metadata,
    }))
  }

  // Every write is admitted against its principal's quota with a count read after it arrived.
  // Requests arriving together (many principals pushing at once) share one statement rather than
  // each taking a connection the commits need. A few counts run at once; past that, the next
  // gathers until one is back (a request is never answered by a count sent before it arrived,
  // whose snapshot may be older).
  let gathering: Map<string, Array<(r: Usage | Error) => void>> | undefined
  let counting = 0
  const count = (): void => {
    const batch = gathering
    if (counting >= MAX_COUNTS || !batch) return
    gathering = undefined
    counting++
    pool
      .query<{ owner: string; sessions: number; bytes: string }>(
        'SELECT owner, count(*)::int AS sessions, coalesce(sum(bytes), 0)::bigint AS bytes FROM colloquy_sessions WHERE owner = ANY($1) GROUP BY owner',
        [[...batch.keys()]],
      )
      .then(
        (res) => {
          const found = new Map(
            res.rows.map((r) => [r.owner, { sessions: r.sessions, bytes: Number(r.bytes) }]),
          )
          for (const [o, waiting] of batch)
            for (const w of waiting) w(found.get(o) ?? { sessions: 0, bytes: 0 })
        },
        (e: Error) => {
          for (const waiting of batch.values()) for (const w of waiting) w(e)
        },
      )
      .finally(() => {
        counting--
        count()
      })
  }
  const usageOf = async (owner: string | null): Promise<Usage> => {
    if (owner === null) {
      const r = (
        await pool.query<{ sessions: number; bytes: string }>(
          'SELECT count(*)::int AS sessions, coalesce(sum(bytes), 0)::bigint AS bytes FROM colloquy_sessions',
        )
      ).rows[0]
      return { sessions: r.sessions, bytes: Number(r.bytes) }
    }
    gathering ??= new Map()
    const waiting = gathering.get(owner) ?? []
    gathering.set(owner, waiting)
    const r = await new Promise<Usage | Error>((resolve) => {
      waiting.push(resolve)
      // Requests of the same tick join; the count starts once the current one (if any) is back.
      queueMicrotask(count)
    })
    if (r instanceof Error) throw r
    return r
  }

  const paged = options.paged === false ? undefined : postgresPages(pool, known)
  const storage: FeedStorage & UsageSource & FullTextSource & { readonly pool: pg.Pool } = {
    name: 'postgres',
    pool,
    fullText: postgresFullText(pool),
    ...(paged && { paged }),
    async open() {
      await migrate(pool)
      await feed.start()
      if (paged) return []
      const rows = (await pool.query<HeadRow>('SELECT id, meta, leaf, v, attachments FROM colloquy_sessions'))
        .rows
      return rows.map(headOf)
    },
    entries: (id) => readEntries(pool, id),
    transact,
    attachmentBytes: (session_id, attachment_id) => storedBytes(pool, session_id, attachment_id),
    async sideRecords(store) {
      const rows = (
        await pool.query<{ key: string; value: unknown }>(
          'SELECT key, value FROM colloquy_side WHERE store = $1 ORDER BY key',
          [store],
        )
      ).rows
      return rows.map((r) => ({ key: r.key, value: r.value }))
    },
    changeFeed: () => feed,
    usageOf,
    async sessionBytes(id) {
      const r = (
        await pool.query<{ bytes: string }>('SELECT bytes FROM colloquy_sessions WHERE id = $1', [toDb(id)])
      ).rows[0]
      return r ? Number(r.bytes) : 0
    },
    close() {
      feed.close()
      if (own) void pool.end().catch(() => {})
    },
  }
  feed = new PostgresFeed(storage, pool, { pollMs: options.pollMs ?? 1000, warn, origin })
  return storage
}
