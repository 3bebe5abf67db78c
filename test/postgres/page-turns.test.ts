import type { SessionMeta } from '@colloquy/core'
import { compareFor, positionOf, type PageQuery } from '@colloquy/core/host'
import pg from 'pg'
import { toDb } from '../../packages/server/src/storage/postgres/codec.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  HeadCache,
  type HeadDigestRow,
  type HeadTextRow,
} from '../../packages/server/src/storage/postgres/head-cache.js'
import { postgresPages, ROW_COST } from '../../packages/server/src/storage/postgres/pages.js'
import { migrate, SORT_KEYS_REBUILT } from '../../packages/server/src/storage/postgres/schema.js'
import { WORK_BUDGETS } from '../../packages/server/src/work.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

// A page of sessions read from PostgreSQL (pages.ts) over heads with large metadata: the work it
// does in Node (looking rows up by digest, parsing the heads it does not know, testing the
// metadata filter) is counted between turns of the event loop, never timed. And the page's
// statements read their rows in order from the sort-key indexes the migration after version 4
// adds, on a database that had data before it.

let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

/** The last migration before the sort-key indexes. */
const BEFORE_INDEXES = 4
const ALICE = 1_500
const OTHERS = 20_000
const tags = Array.from({ length: 300 }, (_, i) => i)

const metaOf = (session_id: string, owner: string, updated_at: number, big: boolean): SessionMeta => ({
  session_id,
  title: `Session ${session_id}`,
  description: '',
  status: 'idle',
  kind: 'user',
  created_at: 1_000 + (updated_at % 7),
  updated_at,
  message_count: 0,
  metadata: big ? { owner, tags } : { owner },
})

/** Alice's sessions (large metadata, some sharing an `updated_at`), and many of others'. */
function rows(): SessionMeta[] {
  const out: SessionMeta[] = []
  for (let i = 0; i < ALICE; i++) out.push(metaOf(`a-${i}`, 'alice', 10_000 + Math.floor(i / 3), true))
  for (let i = 0; i < OTHERS; i++) out.push(metaOf(`o-${i}`, `owner-${i % 10}`, 5_000 + i, false))
  return out
}

async function fill(pool: pg.Pool, metas: readonly SessionMeta[]): Promise<void> {
  for (let i = 0; i < metas.length; i += 2_000) {
    const part = metas.slice(i, i + 2_000)
    await pool.query(
      `INSERT INTO colloquy_sessions (id, owner, meta, leaf, v)
       SELECT id, owner, meta, NULL, 1 FROM unnest($1::text[], $2::text[], $3::json[]) AS r(id, owner, meta)`,
      [
        part.map((m) => toDb(m.session_id)),
        part.map((m) => m.metadata!.owner),
        part.map((m) => JSON.stringify(m)),
      ],
    )
  }
}

/** The contract's order (the core's comparator), in memory. */
const expected = (metas: readonly SessionMeta[], keep: (m: SessionMeta) => boolean): string[] => {
  const cmp = compareFor('updated_desc')
  return metas
    .filter(keep)
    .sort((a, b) => cmp(positionOf(a, 'updated_desc'), positionOf(b, 'updated_desc')))
    .map((m) => m.session_id)
}

interface Tick {
  parsedChars: number
  parsed: number
  matched: number
  filterChars: number
}

/**
 * Reads a page while a turn counter runs (one `setImmediate` callback per turn of the event loop):
 * what the page did between two of its callbacks is what it did in one turn.
 */
async function counted(pages: ReturnType<typeof postgresPages>, known: HeadCache, q: PageQuery) {
  const now: Tick = { parsedChars: 0, parsed: 0, matched: 0, filterChars: 0 }
  const ticks: Tick[] = []
  const read = known.read.bind(known)
  const match = known.match.bind(known)
  known.read = (r: HeadTextRow) => {
    now.parsed++
    now.parsedChars += r.meta.length + (r.attachments?.length ?? 0)
    return read(r)
  }
  known.match = (r: HeadDigestRow) => {
    const head = match(r)
    if (head) now.matched++
    return head
  }
  const accept = q.accept
  const query: PageQuery = {
    ...q,
    ...(accept && {
      accept: (m: SessionMeta) => {
        now.filterChars += JSON.stringify(m).length
        return accept(m)
      },
    }),
  }
  let done = false
  const ticker = new Promise<void>((resolve) => {
    const tick = (): void => {
      ticks.push({ ...now })
      Object.assign(now, { parsedChars: 0, parsed: 0, matched: 0, filterChars: 0 })
      if (done) resolve()
      else setImmediate(tick)
    }
    setImmediate(tick)
  })
  try {
    const page = await pages.page(query)
    done = true
    await ticker
    return { page, ticks }
  } finally {
    known.read = read
    known.match = match
  }
}

const most = (ticks: readonly Tick[], k: keyof Tick): number => ticks.reduce((n, t) => Math.max(n, t[k]), 0)
const total = (ticks: readonly Tick[], k: keyof Tick): number => ticks.reduce((n, t) => n + t[k], 0)

describe('a PostgreSQL page of sessions', () => {
  it('parses, looks up and filters heads a bounded slice per turn, and parses a known head never again', async () => {
    const url = await cluster.createDatabase()
    const pool = new pg.Pool({ connectionString: url, max: 2 })
    try {
      await migrate(pool)
      const metas = rows()
      await fill(pool, metas)
      const biggest = Math.max(...metas.map((m) => JSON.stringify(m).length))
      const slice = WORK_BUDGETS.sliceChars
      const known = new HeadCache()
      const pages = postgresPages(pool, known)
      const own = (m: SessionMeta) => m.metadata?.owner === 'alice'
      // The mention search's page: 2,501 of alice's most recent sessions (she has 1,500).
      const q: PageQuery = { order: 'updated_desc', limit: 2_501, metadata: { owner: 'alice' }, accept: own }

      const first = await counted(pages, known, q)
      expect(first.page.map((h) => h.meta.session_id)).toEqual(expected(metas, own))
      // Every one of alice's heads parsed once, over many turns, each at most a slice and one head.
      expect(total(first.ticks, 'parsed')).toBe(ALICE)
      expect(most(first.ticks, 'parsedChars')).toBeLessThanOrEqual(slice + biggest)
      expect(most(first.ticks, 'filterChars')).toBeLessThanOrEqual(slice + biggest)
      expect(first.ticks.length).toBeGreaterThan(total(first.ticks, 'parsedChars') / (slice + biggest))

      // Read again: every head is known by its digests, none parsed, the look-ups sliced too.
      const again = await counted(pages, known, q)
      expect(again.page.map((h) => h.meta.session_id)).toEqual(expected(metas, own))
      expect(total(again.ticks, 'parsed')).toBe(0)
      expect(total(again.ticks, 'matched')).toBe(ALICE)
      expect(most(again.ticks, 'matched')).toBeLessThanOrEqual(slice / ROW_COST + 1)
      expect(most(again.ticks, 'filterChars')).toBeLessThanOrEqual(slice + biggest)

      // One session rewritten by someone else: its head alone is read again, and the page shows it.
      const moved = { ...metas[7], title: 'Rewritten', updated_at: 99_999 }
      await pool.query('UPDATE colloquy_sessions SET meta = $2, v = 2 WHERE id = $1', [
        moved.session_id,
        JSON.stringify(moved),
      ])
      const third = await counted(pages, known, q)
      expect(total(third.ticks, 'parsed')).toBe(1)
      expect(third.page[0].meta).toEqual(moved)

      // A filter that turns most rows down: the page reads on in larger chunks, still sliced.
      const few = (m: SessionMeta) => own(m) && m.session_id.endsWith('7')
      const sparse = await counted(pages, known, {
        order: 'updated_desc',
        limit: 40,
        metadata: { owner: 'alice' },
        accept: few,
      })
      expect(sparse.page.map((h) => h.meta.session_id)).toEqual(
        expected(
          metas.map((m) => (m.session_id === moved.session_id ? moved : m)),
          few,
        ).slice(0, 40),
      )
      expect(most(sparse.ticks, 'filterChars')).toBeLessThanOrEqual(slice + biggest)
    } finally {
      await pool.end()
    }
  }, 120_000)

  it("walks a group of one timestamp page by page in the core's order, reading each page from its cursor on", async () => {
    const url = await cluster.createDatabase()
    const pool = new pg.Pool({ connectionString: url, max: 2 })
    try {
      await migrate(pool)
      // 600 sessions of one timestamp (a bulk import), and ids the database orders otherwise
      // than the core (escaped NUL and backslash, past U+D7FF) among them.
      const odd = [
        't-\u0000',
        't-\\',
        't-\\a',
        't-a\u0000',
        't-\u{1F600}',
        't-\uE000',
        't-\uFFFF',
        't-\u00e9',
        't-',
      ]
      const ids = [...odd, ...Array.from({ length: 600 }, (_, i) => `t-${String(i).padStart(3, '0')}`)]
      const metas = ids.map((id) => metaOf(id, 'ties', 42, false))
      await fill(pool, metas)
      for (const order of ['updated_desc', 'created_asc'] as const) {
        const cmp = compareFor(order)
        const want = [...metas]
          .sort((a, b) => cmp(positionOf(a, order), positionOf(b, order)))
          .map((m) => m.session_id)
        for (const limit of [1, 7, 100]) {
          const known = new HeadCache()
          const pages = postgresPages(pool, known)
          const got: string[] = []
          let after: { k: number; id: string } | undefined
          let plainCursors = 0
          for (;;) {
            const run = await counted(pages, known, {
              order,
              limit,
              metadata: { owner: 'ties' },
              ...(after && { after }),
            })
            got.push(...run.page.map((h) => h.meta.session_id))
            // Rows looked at: from a cursor of plain characters (U+0001 to U+D7FF but the
            // backslash), those after it, the odd ids (always) and a chunk more at most; from
            // another cursor, the group.
            const left = ids.length - got.length + run.page.length
            // eslint-disable-next-line no-control-regex -- the range starts at U+0001
            const plain = !after || /^[\u0001-\u005b\u005d-\ud7ff]*$/.test(after.id)
            expect(total(run.ticks, 'matched') + total(run.ticks, 'parsed')).toBeLessThanOrEqual(
              plain ? Math.min(ids.length, left + odd.length + Math.max(200, limit + 1)) : ids.length,
            )
            if (plain && after) plainCursors++
            if (run.page.length < limit) break
            after = positionOf(run.page[run.page.length - 1].meta, order)
            if (limit === 1 && got.length > 40) break
          }
          expect(got, `${order}, pages of ${limit}`).toEqual(limit === 1 ? want.slice(0, got.length) : want)
          expect(plainCursors).toBeGreaterThan(0)
        }
      }
    } finally {
      await pool.end()
    }
  }, 300_000)

  // The indexes as migration 5 built them before migration 8 (`jsonFieldSql` then dropped NUL
  // escapes only): a database an older release left at version 7 has these.
  const oldKey = (f: string): string =>
    `((replace(replace(meta::text, '\\\\', '\\u005c'), '\\u0000', '')::json->>'${f}'))::float8`
  const OLD_INDEXES = `DROP INDEX colloquy_sessions_owner_updated, colloquy_sessions_owner_created, colloquy_sessions_updated, colloquy_sessions_created;
    CREATE INDEX colloquy_sessions_owner_updated ON colloquy_sessions (owner, (${oldKey('updated_at')}));
    CREATE INDEX colloquy_sessions_owner_created ON colloquy_sessions (owner, (${oldKey('created_at')}));
    CREATE INDEX colloquy_sessions_updated ON colloquy_sessions ((${oldKey('updated_at')}));
    CREATE INDEX colloquy_sessions_created ON colloquy_sessions ((${oldKey('created_at')}));`

  it.each([
    ['added by a migration to a database that had data', BEFORE_INDEXES, ''],
    ['rebuilt by a migration over the expressions of an older release', SORT_KEYS_REBUILT - 1, OLD_INDEXES],
  ])(
    'reads its rows in order from the sort-key indexes, %s',
    async (_, from, before) => {
      const url = await cluster.createDatabase()
      const pool = new pg.Pool({ connectionString: url, max: 2 })
      const statements: Array<{ sql: string; params: unknown[] }> = []
      try {
        await migrate(pool, from)
        if (before) await pool.query(before)
        const metas = rows()
        await fill(pool, metas)
        await migrate(pool)
        await pool.query('ANALYZE colloquy_sessions')
        const versions = await pool.query<{ version: number }>(
          'SELECT version FROM colloquy_migrations ORDER BY version',
        )
        expect(versions.rows.length).toBeGreaterThan(from)
        const pages = postgresPages(pool, new HeadCache())
        // The statements a page sends (each is explained below, as sent).
        const query = pool.query.bind(pool) as (...a: unknown[]) => Promise<pg.QueryResult>
        ;(pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
          if (typeof a[0] === 'string' && a[0].includes('ORDER BY'))
            statements.push({ sql: a[0], params: (a[1] as unknown[]) ?? [] })
          return query(...a)
        }
        const alice = await pages.page({ order: 'updated_desc', limit: 50, metadata: { owner: 'alice' } })
        expect(alice.map((h) => h.meta.session_id)).toEqual(
          expected(metas, (m) => m.metadata?.owner === 'alice').slice(0, 50),
        )
        const everyone = await pages.page({ order: 'updated_desc', limit: 50 })
        expect(everyone.map((h) => h.meta.session_id)).toEqual(expected(metas, () => true).slice(0, 50))
        const oldest = await pages.page({ order: 'created_asc', limit: 50, metadata: { owner: 'owner-3' } })
        expect(oldest).toHaveLength(50)
        await pages.page({ order: 'created_desc', limit: 50 })
        ;(pool as unknown as { query: unknown }).query = query
        expect(statements.length).toBeGreaterThanOrEqual(4)
        for (const s of statements) {
          const plan = JSON.stringify((await pool.query(`EXPLAIN (FORMAT JSON) ${s.sql}`, s.params)).rows[0])
          // Read in order from an index on the sort key: no sort of the table, no scan of all of it.
          expect(plan, s.sql).toMatch(/"Index Name":"colloquy_sessions_(owner_)?(updated|created)"/)
          expect(plan, s.sql).not.toMatch(/"Node Type":"Sort"|"Node Type":"Seq Scan"/)
        }
      } finally {
        await pool.end()
      }
    },
    120_000,
  )
})
