import type { SessionEntry, SessionMeta } from '@colloquy/core'
import type pg from 'pg'
import { entryDoc, titleDoc } from '../../search/search-doc.js'
import { toDb } from './codec.js'

/** Rows read and written back at a time (a few megabytes of entries at most). */
const BATCH = 1000

/**
 * The full-text migration (schema.ts): the columns, every existing entry's and title's terms by
 * core's tokenizer (`search-doc.ts`, as every commit writes them), each session's sums, then the
 * GIN indexes (built once over the filled columns, faster than kept up row by row). Runs inside
 * the migration's transaction: an interrupted one leaves the previous version whole.
 */
export async function backfillFullText(client: pg.ClientBase): Promise<void> {
  await client.query(
    `ALTER TABLE colloquy_entries ADD COLUMN terms tsvector, ADD COLUMN len int, ADD COLUMN role text,
       ADD COLUMN ts float8, ADD COLUMN parent text;
     ALTER TABLE colloquy_sessions ADD COLUMN title_terms tsvector, ADD COLUMN title_len int,
       ADD COLUMN search_docs bigint NOT NULL DEFAULT 0, ADD COLUMN search_len bigint NOT NULL DEFAULT 0;`,
  )
  for (let after: [string, string] | undefined; ;) {
    const rows = (
      await client.query<{ session_id: string; id: string; entry: SessionEntry }>(
        `SELECT session_id, id, entry FROM colloquy_entries ${after ? 'WHERE (session_id, id) > ($2, $3)' : ''} ORDER BY session_id, id LIMIT $1`,
        after ? [BATCH, ...after] : [BATCH],
      )
    ).rows
    if (!rows.length) break
    const docs = rows.map((r) =>
      entryDoc(r.entry, r.entry.parent_id === null ? null : toDb(r.entry.parent_id)),
    )
    await client.query(
      `UPDATE colloquy_entries e SET terms = u.terms::tsvector, len = u.len, role = u.role, ts = u.ts, parent = u.parent
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::float8[], $7::text[]) AS u(s, i, terms, len, role, ts, parent)
       WHERE e.session_id = u.s AND e.id = u.i`,
      [
        rows.map((r) => r.session_id),
        rows.map((r) => r.id),
        docs.map((d) => d.terms),
        docs.map((d) => d.len),
        docs.map((d) => d.role),
        docs.map((d) => (Number.isFinite(d.ts) ? d.ts : null)),
        docs.map((d) => d.parent),
      ],
    )
    after = [rows[rows.length - 1].session_id, rows[rows.length - 1].id]
  }
  for (let after: string | undefined; ;) {
    const rows = (
      await client.query<{ id: string; meta: SessionMeta }>(
        `SELECT id, meta FROM colloquy_sessions ${after === undefined ? '' : 'WHERE id > $2'} ORDER BY id LIMIT $1`,
        after === undefined ? [BATCH] : [BATCH, after],
      )
    ).rows
    if (!rows.length) break
    const titles = rows.map((r) => titleDoc(r.meta))
    await client.query(
      `UPDATE colloquy_sessions s SET title_terms = u.terms::tsvector, title_len = u.len
       FROM unnest($1::text[], $2::text[], $3::int[]) AS u(id, terms, len) WHERE s.id = u.id`,
      [rows.map((r) => r.id), titles.map((t) => t?.terms ?? null), titles.map((t) => t?.len ?? null)],
    )
    after = rows[rows.length - 1].id
  }
  await client.query(
    `UPDATE colloquy_sessions s SET search_docs = x.n, search_len = x.l
       FROM (SELECT session_id, count(len) AS n, sum(len) AS l FROM colloquy_entries WHERE len IS NOT NULL GROUP BY session_id) x
       WHERE s.id = x.session_id;
     CREATE INDEX colloquy_entries_terms ON colloquy_entries USING gin (terms);
     CREATE INDEX colloquy_sessions_title_terms ON colloquy_sessions USING gin (title_terms);`,
  )
}
