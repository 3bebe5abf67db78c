import pg from 'pg'
import type { SessionEntry, SessionMeta } from '@colloquy/core'
import { recordKey, type ChangeKind } from '../../../packages/server/src/changes/change-index.js'
import { toDb } from '../../../packages/server/src/storage/postgres/codec.js'
import { entryDoc, titleDoc } from '../../../packages/server/src/search/search-doc.js'
import { TERM_COUNTS_OF_ROWS } from '../../../packages/server/src/storage/postgres/schema.js'
import { pushMutations } from '../../support/sync-push.js'
import { firstDifference } from './first-difference.js'

// A LOADER, not a measurement of the server: S5's sessions written straight into PostgreSQL's
// schema (multi-row INSERTs of what the server's commits write), so that S7 can search 1,000,000
// entries without S5's load through the API (833 s on a quiet machine). Session 0 goes through
// the API first, and the rows this loader would write for it are checked against the rows the
// server wrote: a loader that drifts from the server's commit path stops here, it does not load.

/** Sessions written per statement group (a few thousand entries). */
const SESSIONS_PER_BATCH = 40
const CONNECTIONS = 3

interface Rows {
  session: {
    id: string
    meta: string
    leaf: string
    v: number
    bytes: number
    title_terms: string | null
    title_len: number | null
    search_docs: number
    search_len: number
  }
  entries: Array<{
    id: string
    entry: string
    terms: string | null
    len: number | null
    role: string | null
    ts: number
    parent: string | null
  }>
  changes: Array<{ key: string; kind: ChangeKind; entry_id: string | null }>
}

/** The rows of S5's session `s` as the server's commit writes them (given session 0's meta shape and version). */
function rowsOf(sid: string, changes: readonly unknown[], template: { meta: SessionMeta; v: number }): Rows {
  const created = (changes[0] as { meta: SessionMeta }).meta
  const entries = changes
    .filter((c): c is { type: 'entry'; entry: SessionEntry } => (c as { type: string }).type === 'entry')
    .map((c) => c.entry)
  const last = entries[entries.length - 1]
  // What the engine makes of the pushed meta once the entries are in (counted, last touched).
  const meta: SessionMeta = {
    ...template.meta,
    ...created,
    message_count: template.meta.message_count,
    updated_at: created.created_at + (template.meta.updated_at - template.meta.created_at),
  }
  const metaJson = JSON.stringify(
    Object.fromEntries(Object.keys(template.meta).map((k) => [k, meta[k as keyof SessionMeta]])),
  )
  const title = titleDoc(meta)
  const rows = entries.map((e) => {
    const doc = entryDoc(e, e.parent_id === null ? null : toDb(e.parent_id))
    return { id: toDb(e.id), entry: JSON.stringify(e), ...doc }
  })
  return {
    session: {
      id: toDb(sid),
      meta: metaJson,
      leaf: toDb(last.id),
      v: template.v,
      bytes: Buffer.byteLength(metaJson) + rows.reduce((n, r) => n + Buffer.byteLength(r.entry), 0),
      title_terms: title?.terms ?? null,
      title_len: title?.len ?? null,
      search_docs: rows.filter((r) => r.len !== null).length,
      search_len: rows.reduce((n, r) => n + (r.len ?? 0), 0),
    },
    entries: rows,
    changes: [
      { key: toDb(recordKey({ seq: 0, kind: 'created', session_id: sid })), kind: 'created', entry_id: null },
      ...entries.map((e) => ({
        key: toDb(recordKey({ seq: 0, kind: 'added', session_id: sid, entry_id: e.id })),
        kind: 'added' as const,
        entry_id: toDb(e.id),
      })),
      { key: toDb(recordKey({ seq: 0, kind: 'leaf', session_id: sid })), kind: 'leaf', entry_id: null },
    ],
  }
}

/** What the server wrote for one session, in the loader's terms. */
async function storedRows(db: pg.Pool, sid: string): Promise<Rows> {
  const s = (
    await db.query(
      `SELECT id, meta::text AS meta, leaf, v::int AS v, bytes::int AS bytes, title_terms::text AS title_terms, title_len,
         search_docs::int AS search_docs, search_len::int AS search_len FROM colloquy_sessions WHERE id = $1`,
      [toDb(sid)],
    )
  ).rows[0] as Rows['session']
  const entries = (
    await db.query(
      'SELECT id, entry::text AS entry, terms::text AS terms, len, role, ts, parent FROM colloquy_entries WHERE session_id = $1 ORDER BY pos',
      [toDb(sid)],
    )
  ).rows as Rows['entries']
  const changes = (
    await db.query('SELECT key, kind, entry_id FROM colloquy_changes WHERE session_id = $1 ORDER BY seq', [
      toDb(sid),
    ])
  ).rows as Rows['changes']
  return { session: s, entries, changes }
}

/**
 * Loads `sessions` sessions made by `changesOf(s)` (S5's data): session 0 through the API at
 * `url`, checked, then the rest straight into the database at `databaseUrl`, GIN index dropped
 * during the load and built once after it. Returns the milliseconds it took.
 */
export async function bulkLoadPostgres(
  url: string,
  databaseUrl: string,
  sessions: number,
  changesOf: (s: number) => { sid: string; changes: unknown[] },
  log: (line: string) => void,
): Promise<number> {
  const t0 = performance.now()
  const first = changesOf(0)
  await pushMutations(
    url,
    's5-bulk',
    first.changes.map((change, id) => ({ id, change })),
    { what: 'S5 bulk load' },
  )
  const db = new pg.Pool({ connectionString: databaseUrl, max: CONNECTIONS })
  try {
    const stored = await storedRows(db, first.sid)
    const template = { meta: JSON.parse(stored.session.meta) as SessionMeta, v: stored.session.v }
    const made = rowsOf(first.sid, first.changes, template)
    // The server's JSON of an entry may order its keys otherwise: compared as values; a
    // `tsvector` as PostgreSQL prints it (lexemes sorted).
    const printed = async (terms: ReadonlyArray<string | null>): Promise<Array<string | null>> =>
      (
        await db.query<{ t: string | null }>('SELECT t::tsvector::text AS t FROM unnest($1::text[]) t', [
          terms,
        ])
      ).rows.map((r) => r.t)
    const [title] = await printed([made.session.title_terms])
    const terms = await printed(made.entries.map((e) => e.terms))
    made.session.title_terms = title
    made.entries.forEach((e, i) => (e.terms = terms[i]))
    const norm = (r: Rows) => ({
      ...r,
      entries: r.entries.map((e) => ({ ...e, entry: JSON.parse(e.entry) as unknown })),
    })
    const differs = firstDifference(norm(made), norm(stored), '')
    if (differs)
      throw new Error(`S5 bulk load: the loader's rows differ from the server's for ${first.sid}: ${differs}`)
    // The term counts are filled after the load from the documents (as the migration fills
    // them): the server's own counts for session 0 must be what that makes of its rows.
    const termRows = async (sql: string): Promise<string> =>
      JSON.stringify(
        (await db.query<{ owner: string | null; term: string; df: string; tf_max: number }>(sql)).rows
          .map((r) => `${r.owner} ${r.term} ${r.df} ${r.tf_max}`)
          .sort(),
      )
    const keptTerms = await termRows('SELECT owner, term, df, tf_max FROM colloquy_terms')
    if (keptTerms !== (await termRows(TERM_COUNTS_OF_ROWS)) || keptTerms === '[]')
      throw new Error(`S5 bulk load: the server's term counts for ${first.sid} are not those of its rows`)

    await db.query('DROP INDEX IF EXISTS colloquy_entries_terms')
    let seq = Number((await db.query<{ head: string }>('SELECT head FROM colloquy_clock')).rows[0].head)
    let next = 1
    const tenth = Math.max(1, Math.floor(sessions / 10))
    const worker = async (): Promise<void> => {
      for (
        let from = (next += SESSIONS_PER_BATCH) - SESSIONS_PER_BATCH;
        from < sessions;
        from = (next += SESSIONS_PER_BATCH) - SESSIONS_PER_BATCH
      ) {
        const batch: Rows[] = []
        for (let s = from; s < Math.min(sessions, from + SESSIONS_PER_BATCH); s++) {
          const { sid, changes } = changesOf(s)
          batch.push(rowsOf(sid, changes, template))
        }
        const ss = batch.map((r) => r.session)
        const es = batch.flatMap((r) => r.entries.map((e) => ({ sid: r.session.id, ...e })))
        const cs = batch.flatMap((r) => r.changes.map((c) => ({ sid: r.session.id, ...c })))
        const base = seq
        seq += cs.length
        const client = await db.connect()
        try {
          await client.query('BEGIN')
          await client.query(
            `INSERT INTO colloquy_sessions (id, owner, meta, leaf, v, bytes, title_terms, title_len, search_docs, search_len)
             SELECT id, NULL, meta::json, leaf, v, bytes, title_terms::tsvector, title_len, search_docs, search_len
             FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::int[], $8::bigint[], $9::bigint[])
               AS u(id, meta, leaf, v, bytes, title_terms, title_len, search_docs, search_len)`,
            [
              ss.map((s) => s.id),
              ss.map((s) => s.meta),
              ss.map((s) => s.leaf),
              ss.map((s) => s.v),
              ss.map((s) => s.bytes),
              ss.map((s) => s.title_terms),
              ss.map((s) => s.title_len),
              ss.map((s) => s.search_docs),
              ss.map((s) => s.search_len),
            ],
          )
          await client.query(
            `INSERT INTO colloquy_entries (session_id, id, entry, terms, len, role, ts, parent)
             SELECT s, i, entry::json, terms::tsvector, len, role, ts, parent
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::float8[], $8::text[])
               AS u(s, i, entry, terms, len, role, ts, parent)`,
            [
              es.map((e) => e.sid),
              es.map((e) => e.id),
              es.map((e) => e.entry),
              es.map((e) => e.terms),
              es.map((e) => e.len),
              es.map((e) => e.role),
              es.map((e) => e.ts),
              es.map((e) => e.parent),
            ],
          )
          await client.query(
            `INSERT INTO colloquy_changes (key, seq, kind, session_id, entry_id, owner, metadata)
             SELECT key, $1::bigint + o, kind, s, entry_id, NULL, NULL
             FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(key, kind, s, entry_id, o)`,
            [
              base,
              cs.map((c) => c.key),
              cs.map((c) => c.kind),
              cs.map((c) => c.sid),
              cs.map((c) => c.entry_id),
            ],
          )
          await client.query('COMMIT')
        } catch (e) {
          await client.query('ROLLBACK').catch(() => {})
          throw e
        } finally {
          client.release()
        }
        const done = Math.min(sessions, from + SESSIONS_PER_BATCH)
        if (Math.floor(done / tenth) > Math.floor(from / tenth))
          log(
            `  bulk: ${done.toLocaleString('en-US')} sessions written, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
          )
      }
    }
    await Promise.all(Array.from({ length: CONNECTIONS }, worker))
    await db.query('UPDATE colloquy_clock SET head = $1 WHERE id = 1', [seq])
    log(`  bulk: building the GIN index, ${((performance.now() - t0) / 1000).toFixed(0)} s`)
    await db.query('CREATE INDEX colloquy_entries_terms ON colloquy_entries USING gin (terms)')
    log(`  bulk: counting terms, ${((performance.now() - t0) / 1000).toFixed(0)} s`)
    await db.query(
      `DELETE FROM colloquy_terms; INSERT INTO colloquy_terms (owner, term, df, tf_max) ${TERM_COUNTS_OF_ROWS}`,
    )
    await db.query('ANALYZE')
  } finally {
    await db.end()
  }
  return performance.now() - t0
}
