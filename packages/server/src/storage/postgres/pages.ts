import type { SessionHead } from '@colloquy/core'
import { compareFor, positionOf, type PageQuery, type PagedReads } from '@colloquy/core/host'
import type pg from 'pg'
import { ownerOf, toDb } from './codec.js'
import type { HeadCache, HeadTextRow } from './head-cache.js'
import { nextTurn } from '../../work.js'

/**
 * Rows the first statement of a page reads (a tie group of equal sort keys is read whole); each
 * further one, needed when the metadata filter turned rows down, reads twice as many, up to `MAX_CHUNK`.
 */
const CHUNK = 200
const MAX_CHUNK = 6400
/** Rows parsed, or tested against the filter, between turns of the event loop. */
const SLICE = 64

const COLUMNS = 'id, meta::text AS meta, leaf, v, attachments::text AS attachments'

/**
 * Heads on demand from `colloquy_sessions` (the core's `PagedReads`): the engine then holds a
 * bounded working set, and a server over a database of any size opens without reading a head.
 *
 * A page is read in chunks ordered by the sort key alone (`updated_at` or `created_at` in the
 * meta), each chunk completed with every row sharing its last key, and ordered in memory with
 * the core's own comparator (`compareFor`): ties break by session id exactly as every other
 * storage breaks them, whatever the database's collation and however ids are escaped for it.
 * Status, kinds and the owner a metadata filter names are filtered by the database; the rest of
 * the metadata filter (`accept`) here, which may take several chunks to fill a page.
 */
export function postgresPages(pool: pg.Pool, known: HeadCache): PagedReads & { reads: number } {
  const reads = {
    reads: 0,
    async head(id: string): Promise<SessionHead | undefined> {
      reads.reads++
      const r = (
        await pool.query<HeadTextRow>(`SELECT ${COLUMNS} FROM colloquy_sessions WHERE id = $1`, [toDb(id)])
      ).rows[0]
      return r && known.read(r)
    },
    async page(q: PageQuery): Promise<SessionHead[]> {
      const field = q.order === 'updated_desc' ? 'updated_at' : 'created_at'
      const key = `(meta->>'${field}')::float8`
      const asc = q.order === 'created_asc'
      const cmp = compareFor(q.order)
      const where: string[] = []
      const args: unknown[] = []
      if (q.status != null) {
        args.push(q.status)
        where.push(`meta->>'status' = $${args.length}`)
      }
      if (q.kinds != null) {
        args.push(q.kinds)
        where.push(`meta->>'kind' = ANY($${args.length}::text[])`)
      }
      // A filter on the owner reads that owner's rows only (its index): what tenancy lists by.
      // (A NUL cannot be a query parameter, nor in the owner column: `accept` alone decides then.)
      const owner = ownerOf(q.metadata ?? undefined)
      if (owner !== null && !owner.includes('\u0000')) {
        args.push(owner)
        where.push(`owner = $${args.length}`)
      }
      const fixed = args.length
      const out: SessionHead[] = []
      // Rows with a key past `bound` are read next (`inclusive`: the bound's own key too).
      let bound = q.after?.k
      let inclusive = true
      const select = async (cond: string, extra: unknown[], limit?: number): Promise<HeadTextRow[]> => {
        const all = [...where, cond].filter(Boolean)
        const sql =
          `SELECT ${COLUMNS}, ${key} AS k FROM colloquy_sessions` +
          (all.length ? ` WHERE ${all.join(' AND ')}` : '') +
          ` ORDER BY ${key} ${asc ? 'ASC' : 'DESC'}` +
          (limit ? ` LIMIT ${limit}` : '')
        reads.reads++
        return (await pool.query<HeadTextRow & { k: number }>(sql, [...args.slice(0, fixed), ...extra])).rows
      }
      let chunk = Math.min(MAX_CHUNK, Math.max(CHUNK, q.limit + 1))
      while (out.length < q.limit) {
        const op = asc ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<'
        let rows = await select(
          bound === undefined ? '' : `${key} ${op} $${fixed + 1}`,
          bound === undefined ? [] : [bound],
          chunk,
        )
        const full = rows.length === chunk
        if (full) {
          // The chunk may have cut a group of equal keys: read the whole group.
          const last = Number((rows[rows.length - 1] as HeadTextRow & { k: number }).k)
          rows = rows.filter((r) => Number((r as HeadTextRow & { k: number }).k) !== last)
          rows.push(...(await select(`${key} = $${fixed + 1}`, [last])))
          bound = last
          inclusive = false
        }
        // Parsing a chunk's heads and testing the filter on them (up to MAX_CHUNK rows, each
        // with its metadata) is work one request must not do in one turn: a slice at a time.
        const heads: SessionHead[] = []
        for (let i = 0; i < rows.length; i++) {
          if (i > 0 && i % SLICE === 0) await nextTurn()
          heads.push(known.read(rows[i]))
        }
        heads.sort((a, b) => cmp(positionOf(a.meta, q.order), positionOf(b.meta, q.order)))
        for (let i = 0; i < heads.length && out.length < q.limit; i++) {
          if (i > 0 && i % SLICE === 0) await nextTurn()
          const h = heads[i]
          if (q.after && cmp(positionOf(h.meta, q.order), q.after) <= 0) continue
          if (!q.accept || q.accept(h.meta)) out.push(h)
        }
        if (!full) break
        chunk = Math.min(MAX_CHUNK, chunk * 2)
      }
      return out
    },
  }
  return reads
}
