import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate } from '../../packages/server/src/storage/postgres/schema.js'
import {
  beginStaging,
  stageTermRowsSql,
  termCountsSql,
} from '../../packages/server/src/search/term-counts.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

// The work of keeping the term counts (`term-counts.ts`) is bounded by what a commit changes: not
// by the size of `colloquy_terms` (a removed term's count is found by its key), nor by the chunks
// staged before (a commit written in many statements, a large import, stages each chunk alone).

let cluster: TestCluster
let pool: pg.Pool
beforeAll(async () => {
  cluster = await startPostgres()
  pool = new pg.Pool({ connectionString: await cluster.createDatabase(), max: 2 })
  await migrate(pool)
})
afterAll(async () => {
  await pool?.end()
  cluster?.stop()
})

/** `docs(owner, terms, sign)`: `$1` documents of one term each, `w<$2 + i>`, with sign `$3`. */
const DOCS = `(SELECT $4::text AS owner, ('w' || ($2::int + g)::text || ':1')::tsvector AS terms, $3::int AS sign
  FROM generate_series(1, $1::int) g)`

/** The plan's nodes, depth first. */
function* nodes(plan: Record<string, unknown>): Generator<Record<string, unknown>> {
  yield plan
  for (const p of (plan.Plans as Array<Record<string, unknown>> | undefined) ?? []) yield* nodes(p)
}

describe('term counts at scale', () => {
  it('a commit that removes terms finds their counts by key: no scan of colloquy_terms', async () => {
    // 200,000 counts over 200 owners, as the statistics of a large deployment have them.
    await pool.query(`INSERT INTO colloquy_terms (owner, term, df, tf_max)
      SELECT 'owner' || o, 'w' || t, 1 + (o + t) % 3, 1 FROM generate_series(1, 200) o, generate_series(1, 1000) t;
      ANALYZE colloquy_terms`)
    const client = await pool.connect()
    try {
      await beginStaging(client)
      // Eleven of owner7's terms lose a document (some fall to zero), as an edit's would.
      await client.query(stageTermRowsSql(DOCS), [11, 0, -1, 'owner7'])
      const plan = (
        await client.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(
          `EXPLAIN (FORMAT JSON) WITH clock AS (SELECT head FROM colloquy_clock WHERE id = 1 FOR UPDATE), ${termCountsSql('clock')} SELECT 1`,
        )
      ).rows[0]['QUERY PLAN'][0].Plan
      const scans = [...nodes(plan)].filter((n) => n['Relation Name'] === 'colloquy_terms')
      expect(scans.length).toBeGreaterThan(0)
      expect(scans.map((n) => n['Node Type'])).not.toContain('Seq Scan')
      // And the counts are right: a count at one is gone, the others one less.
      await client.query(
        `WITH clock AS (SELECT head FROM colloquy_clock WHERE id = 1 FOR UPDATE), ${termCountsSql('clock')} SELECT 1`,
      )
      const left = (
        await client.query<{ term: string; df: string }>(
          "SELECT term, df FROM colloquy_terms WHERE owner = 'owner7' AND term = ANY($1) ORDER BY term",
          [Array.from({ length: 11 }, (_, i) => `w${i + 1}`)],
        )
      ).rows
      const was = (t: number): number => 1 + ((7 + t) % 3)
      expect(left.map((r) => [r.term, Number(r.df)])).toStrictEqual(
        Array.from({ length: 11 }, (_, i) => [`w${i + 1}`, was(i + 1) - 1])
          .filter(([, df]) => (df as number) > 0)
          .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1)),
      )
      await client.query('ROLLBACK')
    } finally {
      client.release()
    }
  }, 120_000)

  it("staging a commit's chunk costs the same however many chunks came before it", async () => {
    const client = await pool.connect()
    try {
      await beginStaging(client)
      const ROWS = 3000
      let chunk = 0
      const stage = async (): Promise<number> => {
        const t = performance.now()
        await client.query(stageTermRowsSql(DOCS), [ROWS, ROWS * chunk++, 1, 'alice'])
        return performance.now() - t
      }
      // The fastest of three chunks at the start and after 60 (180,000 rows staged before).
      const first = Math.min(await stage(), await stage(), await stage())
      for (let i = 0; i < 60; i++) await stage()
      const later = Math.min(await stage(), await stage(), await stage())
      // Linear staging: about the same (a margin for a busy machine); staging that read back
      // what came before took about 10 times as long by then.
      expect(later).toBeLessThan(4 * first)
      await client.query('ROLLBACK')
    } finally {
      client.release()
    }
  }, 300_000)
})
