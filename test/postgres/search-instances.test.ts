import { describe, expect, it } from 'vitest'
import type { SearchResult } from '@colloquy/core/search'
import { rpc, user } from '../server/helpers.js'
import { useInstances } from './instances-harness.js'

// `session::search` on several instances of one PostgreSQL database: an instance's index
// follows what the others commit (their changes reach its store through the database's feed).
const ALICE = 'tok-alice-search-pg-01'
const BOB = 'tok-bob-search-pg-01'
const pg = useInstances('--token', `alice=${ALICE}`, '--token', `bob=${BOB}`, '--requests-per-second', '0')

/** Polls `check` until it holds (the other instance's change arrives by NOTIFY, not at once). */
const until = async (check: () => Promise<boolean>, what: string): Promise<void> => {
  const end = Date.now() + 15_000
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('session::search on PostgreSQL instances', () => {
  it("an instance's index follows appends, edits and deletions made on another; tenancy holds there too", async () => {
    const one = await pg.start()
    const two = await pg.start()
    const ids = (r: SearchResult) => r.hits.map((h) => h.entry_id).sort()
    const search = (query: string, token = ALICE) =>
      rpc<SearchResult>(two.url, 'session::search', { query }, token)

    const { session_id } = await rpc<{ session_id: string }>(one.url, 'session::create', {}, ALICE)
    const a = await rpc<{ entry_id: string }>(
      one.url,
      'session::append',
      { session_id, message: user('first apricot') },
      ALICE,
    )
    // Built on instance two from the database.
    await until(async () => ids(await search('apricot')).length === 1, 'the first message')
    expect(ids(await search('apricot'))).toStrictEqual([a.entry_id])
    // Then kept up with what instance one commits.
    const b = await rpc<{ entry_id: string }>(
      one.url,
      'session::append',
      { session_id, message: user('second apricot') },
      ALICE,
    )
    await until(async () => ids(await search('apricot')).length === 2, 'the appended message')
    expect(ids(await search('apricot'))).toStrictEqual([a.entry_id, b.entry_id].sort())
    await rpc(
      one.url,
      'session::update-message',
      { session_id, entry_id: a.entry_id, content: [{ type: 'text', text: 'now a plum' }] },
      ALICE,
    )
    await until(async () => ids(await search('apricot')).length === 1, 'the edit')
    expect(ids(await search('plum'))).toStrictEqual([a.entry_id])
    expect((await search('apricot', BOB)).hits).toStrictEqual([])
    await rpc(one.url, 'session::delete', { session_id }, ALICE)
    await until(async () => (await search('apricot')).hits.length === 0, 'the deletion')
    expect((await search('plum')).hits).toStrictEqual([])
  })
})
