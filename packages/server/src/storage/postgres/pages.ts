import type { SessionHead } from '@colloquy/core'
import { compareFor, positionOf, type PageQuery, type PagedReads } from '@colloquy/core/host'
import type pg from 'pg'
import { ownerOf, toDb } from './codec.js'
import {
  digestSql,
  HEAD_TEXTS,
  TEXTS_PER_READ,
  type HeadCache,
  type HeadDigestRow,
  type HeadTextRow,
} from './head-cache.js'
import { jsonFieldSql } from './json-field.js'
import { sortKeySql } from './schema.js'
import { nextTurn, slicer } from '../../work.js'

/**
 * Rows the first statement of a page reads (a tie group of equal sort keys is read whole); each
 * further one, needed when the metadata filter turned rows down, reads twice as many, up to `MAX_CHUNK`.
 */
const CHUNK = 200
const MAX_CHUNK = 6400
/**
 * What looking a row up in the `HeadCache` (or skipping it) costs, in the characters of JSON the
 * page's turns are sliced by (`WORK_BUDGETS.sliceChars`): a few string comparisons. Parsing a
 * head or testing the filter on it costs its texts' length, at least this.
 */
export const ROW_COST = 64

/**
 * Ids the database orders as the core does: characters U+0001 to U+D7FF but the backslash. They
 * are stored as they are (codec.ts escapes only NUL and the backslash), each is one UTF-16 code
 * unit, and their code unit order (the core's) is the byte order of their UTF-8 (`COLLATE "C"`).
 * A character past U+D7FF is two code units, or orders differently in UTF-8.
 */
// eslint-disable-next-line no-control-regex -- U+0001 is the first character the database stores as it is (NUL is escaped)
const PLAIN = /^[\u0001-\u005b\u005d-\ud7ff]*$/
/** `PLAIN` as a PostgreSQL regular expression (a statement parameter). */
const PLAIN_SQL = '^[\\u0001-\\u005b\\u005d-\\ud7ff]*$'

const COLUMNS = 'id, meta::text AS meta, leaf, v, attachments::text AS attachments'
/**
 * A page's rows as first read: the digests of their texts (`HeadCache` knows the heads of most),
 * and their texts' length (what parsing them, or testing the filter on them, costs).
 */
const DIGESTS = `id, ${digestSql('meta')} AS meta, leaf, v, ${digestSql('attachments')} AS attachments, octet_length(meta::text) + coalesce(octet_length(attachments::text), 0) AS n`

type PageRow = HeadDigestRow & { k: number; n: number }

/**
 * Heads on demand from `colloquy_sessions` (the core's `PagedReads`): the engine then holds a
 * bounded working set, and a server over a database of any size opens without reading a head.
 *
 * A page is read in chunks ordered by the sort key alone (`updated_at` or `created_at` in the
 * meta, each indexed alone and after the owner: schema.ts), each chunk completed with every row
 * sharing its last key, and ordered in memory with the core's own comparator (`compareFor`): ties
 * break by session id exactly as every other storage breaks them, whatever the database's
 * collation and however ids are escaped for it. Status, kinds and the owner a metadata filter
 * names are filtered by the database; the rest of the metadata filter (`accept`) here, which may
 * take several chunks to fill a page.
 *
 * A chunk is read as digests first: the heads `HeadCache` knows (read or written here before) are
 * taken as they are, and only the others' texts are read and parsed. A server answering the same
 * pages again (a mention search, a list) parses nothing, and receives no metadata. The work done
 * here (looking rows up, parsing, testing the filter) is counted in characters and sliced: no
 * turn of the event loop does more than `WORK_BUDGETS.sliceChars` of it, plus one row.
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
      const key = sortKeySql(field)
      const asc = q.order === 'created_asc'
      const cmp = compareFor(q.order)
      const where: string[] = []
      const args: unknown[] = []
      if (q.status != null) {
        args.push(q.status)
        where.push(`${jsonFieldSql('meta', 'status')} = $${args.length}`)
      }
      if (q.kinds != null) {
        args.push(q.kinds)
        where.push(`${jsonFieldSql('meta', 'kind')} = ANY($${args.length}::text[])`)
      }
      // A filter on the owner reads that owner's rows only (its index): what tenancy lists by.
      // (A NUL cannot be a query parameter, nor in the owner column: `accept` alone decides then.)
      const owner = ownerOf(q.metadata ?? undefined)
      if (owner !== null && !owner.includes('\u0000')) {
        args.push(owner)
        where.push(`owner = $${args.length}`)
      }
      // The rows of the cursor's own key up to the cursor, left out by the database where it
      // orders them as the core does (ids of `PLAIN` characters, the cursor's too): a walk through
      // many sessions of one timestamp (a bulk import) reads each page from the cursor on, not
      // the whole group again. The others (any id, or a cursor, with other characters) are
      // read and left out here, by the core's comparator.
      if (q.after && PLAIN.test(q.after.id)) {
        args.push(q.after.k, q.after.id, PLAIN_SQL)
        const n = args.length
        where.push(
          `NOT (${key} = $${n - 2} AND id ~ $${n} AND id COLLATE "C" ${asc ? '<=' : '>='} $${n - 1})`,
        )
      }
      const fixed = args.length
      const out: SessionHead[] = []
      // Rows with a key past `bound` are read next (`inclusive`: the bound's own key too).
      let bound = q.after?.k
      let inclusive = true
      const select = async (cond: string, extra: unknown[], limit?: number): Promise<PageRow[]> => {
        const all = [...where, cond].filter(Boolean)
        const sql =
          `SELECT ${DIGESTS}, ${key} AS k FROM colloquy_sessions` +
          (all.length ? ` WHERE ${all.join(' AND ')}` : '') +
          ` ORDER BY ${key} ${asc ? 'ASC' : 'DESC'}` +
          (limit ? ` LIMIT ${limit}` : '')
        reads.reads++
        return (await pool.query<PageRow>(sql, [...args.slice(0, fixed), ...extra])).rows
      }
      // Counts the work below and lets other requests run once it reaches a slice. Each result
      // from the database is worked on from a turn of its own (`nextTurn` first): the turn its
      // answer arrived in stays the driver's.
      const work = slicer()
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
          const last = Number(rows[rows.length - 1].k)
          rows = rows.filter((r) => Number(r.k) !== last)
          rows.push(...(await select(`${key} = $${fixed + 1}`, [last])))
          bound = last
          inclusive = false
        }
        await nextTurn()
        // The heads known by their digests; the others are read by id below, and parsed.
        const heads: Array<{ head: SessionHead; at: { k: number; id: string }; cost: number }> = []
        const unknown: string[] = []
        for (const r of rows) {
          const head = known.match(r)
          if (head)
            heads.push({ head, at: positionOf(head.meta, q.order), cost: Math.max(ROW_COST, Number(r.n)) })
          else unknown.push(r.id)
          await work(ROW_COST)
        }
        for (let i = 0; i < unknown.length; i += TEXTS_PER_READ) {
          const texts = (await pool.query<HeadTextRow>(HEAD_TEXTS, [unknown.slice(i, i + TEXTS_PER_READ)]))
            .rows
          reads.reads++
          await nextTurn()
          // (A row deleted since the digests were read is not in `texts`; one written since is
          // read as it is now, and placed below by its own sort key.)
          for (const r of texts) {
            const cost = Math.max(ROW_COST, r.meta.length + (r.attachments?.length ?? 0))
            const head = known.read(r)
            heads.push({ head, at: positionOf(head.meta, q.order), cost })
            await work(cost)
          }
        }
        heads.sort((a, b) => cmp(a.at, b.at))
        for (let i = 0; i < heads.length && out.length < q.limit; i++) {
          const { head, at, cost } = heads[i]
          if (q.after && cmp(at, q.after) <= 0) {
            await work(ROW_COST)
            continue
          }
          if (!q.accept || q.accept(head.meta)) out.push(head)
          await work(q.accept ? cost : ROW_COST)
        }
        if (!full) break
        chunk = Math.min(MAX_CHUNK, chunk * 2)
      }
      return out
    },
  }
  return reads
}
