import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { parseSearchRequest, type SearchResult } from '@colloquy/core/search'
import { postgresFullText } from '../../packages/server/src/search/postgres-search.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'
import { pushMutations, sessionChanges } from '../support/sync-push.js'
import { rpc, startServer, type ServerProcess } from '../server/helpers.js'

/**
 * What one search on PostgreSQL may cost: every statement reads a bounded number of rows (a
 * term's count, a prefix's words, the candidates scored), and past the bound the
 * answer is the best of what was read, marked `incomplete`, as core's index answers past its work
 * budget. And what a commit may cost: a message of more distinct words than a `tsvector` holds is
 * stored and found, never refused.
 */
const ALICE = 'tok-alice-bounds-0123'
let cluster: TestCluster
let url: string
let server: ServerProcess
let pool: pg.Pool
beforeAll(async () => {
  cluster = await startPostgres()
  url = await cluster.createDatabase()
  server = await startServer(['--postgres', url, '--token', `alice=${ALICE}`, '--requests-per-second', '0'])
  pool = new pg.Pool({ connectionString: url, max: 2 })
  // 300 messages holding "kiwi", each with a word of its own ("kiwi0" … "kiwi299").
  const changes = sessionChanges('bounds', 'bounds', 1_700_000_000_000, 300, (i) => ({
    role: 'user',
    content: [{ type: 'text', text: `kiwi kiwi${i} orchard number ${i}` }],
    timestamp: 1_700_000_000_000 + i,
  }))
  await pushMutations(
    server.url,
    'bounds',
    changes.map((change, id) => ({ id, change })),
    { what: 'bounds', token: ALICE },
  )
})
afterAll(async () => {
  await pool?.end()
  await server?.stop()
  cluster?.stop()
})

const ask = (rows: number | undefined, body: unknown): Promise<SearchResult> =>
  postgresFullText(pool, rows === undefined ? {} : { rows })('alice', parseSearchRequest(body))

describe('full text on PostgreSQL: bounded work', () => {
  it('a term in more documents than a statement reads: the best read in order, complete when no unread one can rank higher', async () => {
    // Not as a prefix (300 words start with "kiwi": the next test).
    const whole = await ask(undefined, { query: 'kiwi', limit: 10, prefix: false })
    expect(whole.incomplete).toBe(false)
    expect(whole.hits).toHaveLength(10)
    // 300 candidates under a bound of 50 rows: entries read shortest and newest first, and as
    // every one holds "kiwi" twice (the most any does) in five terms, the first page proves the
    // best ten: the same answer, complete.
    expect(await ask(50, { query: 'kiwi', limit: 10, prefix: false })).toStrictEqual(whole)
    // A long message holding "kiwi" forty times outranks them all but is read last: under the
    // bound it is never reached (the best of what was read, incomplete); over it, it is first.
    const { session_id } = await rpc<{ session_id: string }>(server.url, 'session::create', {}, ALICE)
    const long = await rpc<{ entry_id: string }>(
      server.url,
      'session::append',
      {
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: 'kiwi '.repeat(40) }], timestamp: 1 },
      },
      ALICE,
    )
    const cut = await ask(50, { query: 'kiwi', limit: 10, prefix: false })
    expect(cut.incomplete).toBe(true)
    expect(cut.hits).toHaveLength(10)
    for (const h of cut.hits) expect(h.snippet.text).toMatch(/^kiwi kiwi\d+ orchard/)
    const over = await ask(400, { query: 'kiwi', limit: 10, prefix: false })
    expect(over.incomplete).toBe(false)
    expect(over.hits[0].entry_id).toBe(long.entry_id)
    expect(over).toStrictEqual(await ask(undefined, { query: 'kiwi', limit: 10, prefix: false }))
  })

  it('a prefix of more words than core keeps (64): incomplete, as core answers; common terms counted exactly', async () => {
    const many = await ask(undefined, { query: 'kiwi0 kiw', limit: 5 })
    // 300 words start with "kiw"; core keeps the 64 most frequent ("kiwi" first): incomplete.
    expect(many.incomplete).toBe(true)
    expect(many.hits.map((h) => h.snippet.text.split(' ')[1])).toStrictEqual(['kiwi0'])
    const few = await ask(undefined, { query: 'orchard number 29', limit: 20 })
    expect(few.incomplete).toBe(false)
    expect(few.hits.map((h) => h.snippet.text.split(' ')[1]).sort()).toStrictEqual(
      ['kiwi29', ...Array.from({ length: 10 }, (_, i) => `kiwi29${i}`)].sort(),
    )
    // Every term's count is exact whatever the bound ("orchard" and "number" are in 300
    // documents): under a bound of 20 rows the 11 candidates of "29" are all read and the answer
    // is whole; under 10 they are not.
    expect(await ask(20, { query: 'orchard number 29', limit: 20 })).toStrictEqual(few)
    expect((await ask(10, { query: 'orchard number 29', limit: 20 })).incomplete).toBe(true)
  })

  it('a message of more distinct words than a tsvector holds (1 MiB) is stored and found by its words', async () => {
    const { session_id } = await rpc<{ session_id: string }>(server.url, 'session::create', {}, ALICE)
    // About 1.4 MB of distinct words, in two text blocks (a JSON string holds at most 1 MiB).
    const words = Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}q`)
    const content = [
      { type: 'text', text: `hugeopening ${words.slice(0, 100_000).join(' ')}` },
      { type: 'text', text: words.slice(100_000).join(' ') },
    ]
    const appended = await rpc<{ entry_id: string }>(
      server.url,
      'session::append',
      { session_id, message: { role: 'user', content, timestamp: 1 } },
      ALICE,
    )
    const found = await rpc<SearchResult>(server.url, 'session::search', { query: 'hugeopening' }, ALICE)
    expect(found.hits.map((h) => h.entry_id)).toStrictEqual([appended.entry_id])
    expect(
      (await rpc<SearchResult>(server.url, 'session::search', { query: words[1000] }, ALICE)).hits.map(
        (h) => h.entry_id,
      ),
    ).toStrictEqual([appended.entry_id])
  })
})
