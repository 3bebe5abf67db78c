import { filter, firstValueFrom } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, SessionError, type Store } from '../../src/index.js'
import { enableSearch, SEARCH_LIMITS } from '../../src/search/index.js'

const user = (text: string, timestamp = 1) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp,
})
const assistant = (text: string, timestamp = 1) => ({
  role: 'assistant' as const,
  content: [{ type: 'text' as const, text }],
  timestamp,
  stop_reason: 'end' as const,
  model: 'm',
  provider: 'p',
})
const open = (): Promise<Store> => createStore({ storage: memoryStorage(), multiTab: false })

describe('search requests are checked', () => {
  const bad: [string, unknown, RegExp][] = [
    ['no query', {}, /query: missing required field/],
    ['a query that is no string', { query: 7 }, /query: expected a string/],
    [
      'a query over the byte bound',
      { query: 'é'.repeat(513) },
      /query: a query is longer than 1024 UTF-8 bytes/,
    ],
    ['a lone surrogate', { query: 'a\ud800' }, /query: a query must be well-formed/],
    [
      'too many terms',
      { query: Array.from({ length: 33 }, (_, i) => `w${i}`).join(' ') },
      /at most 32 terms/,
    ],
    ['too many CJK pairs', { query: '我喜欢用搜索引擎查资料'.repeat(4) }, /at most 32 terms/],
    ['limit 0', { query: 'a', limit: 0 }, /limit: must be between 1 and 100/],
    ['limit 101', { query: 'a', limit: 101 }, /limit: must be between 1 and 100/],
    ['a fractional limit', { query: 'a', limit: 1.5 }, /limit: expected a non-negative integer/],
    ['an unknown role', { query: 'a', roles: ['admin'] }, /roles\[0\]: expected one of/],
    ['a session id that is no string', { query: 'a', session_ids: [1] }, /session_ids\[0\]/],
    [
      'too many sessions',
      { query: 'a', session_ids: Array(1001).fill('s') },
      /session_ids: at most 1000 items/,
    ],
    ['a date that is no number', { query: 'a', from: 'yesterday' }, /from: expected a finite number/],
    [
      'nesting past the bound',
      { query: 'a', session_ids: JSON.parse('['.repeat(70) + ']'.repeat(70)) },
      /nest|deep/i,
    ],
  ]
  for (const [what, request, message] of bad) {
    it(`refuses ${what}`, async () => {
      const store = await open()
      const search = await enableSearch(store)
      const err = await search.query(request).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(SessionError)
      expect((err as SessionError).code).toBe('session/invalid_request')
      expect((err as SessionError).message).toMatch(message)
      // The live form errors the same way at subscribe.
      await expect(firstValueFrom(search.query$(request))).rejects.toThrow(message)
      search.close()
    })
  }
  it('keeps its bounds in the validator', () => {
    expect(SEARCH_LIMITS).toMatchObject({ queryBytes: 1024, terms: 32, limit: 100 })
  })
})

describe('work per query is bounded', () => {
  it('answers a query matching everything within the budget, marked incomplete', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    await store.appendMany({
      session_id,
      messages: Array.from({ length: 3000 }, (_, i) => user(`common words everywhere ${i}`)),
    })
    const small = await enableSearch(store, { workBudget: 5_000 })
    const cut = await small.query({ query: 'common words everywhere', limit: 20 })
    expect(cut.incomplete).toBe(true)
    expect(cut.hits.length).toBeLessThanOrEqual(20)
    const whole = await (await enableSearch(store)).query({ query: 'common words everywhere', limit: 20 })
    expect(whole.incomplete).toBe(false)
    expect(whole.hits).toHaveLength(20)
  })

  it('expands a one-letter prefix to the most frequent words only', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    await store.appendMany({
      session_id,
      messages: Array.from({ length: 200 }, (_, i) => user(`w${i} w${i % 3}`)),
    })
    const search = await enableSearch(store)
    const r = await search.query({ query: 'w', limit: 100 })
    expect(r.incomplete).toBe(true)
    expect(r.hits).toHaveLength(100)
    // w0, w1 and w2 are the most frequent: every message holds one of them.
    const exact = await search.query({ query: 'w', limit: 100, prefix: true })
    expect(exact.hits.map((h) => h.entry_id)).toEqual(r.hits.map((h) => h.entry_id))
  })
})

describe('ranking and filters', () => {
  it('finds only messages holding every word, the typed prefix included', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    await store.appendMany({
      session_id,
      messages: [
        user('postgres cursor here'),
        user('postgres only'),
        user('cursor only'),
        user('postgres cursors both'),
        user('nothing'),
      ],
    })
    const search = await enableSearch(store)
    const texts = async (query: string, prefix: boolean): Promise<string[]> =>
      (await search.query({ query, prefix })).hits.map((h) => h.snippet.text).sort()
    expect(await texts('cursor postgres', false)).toEqual(['postgres cursor here'])
    expect(await texts('postgres curs', true)).toEqual(['postgres cursor here', 'postgres cursors both'])
    expect(await texts('only curs', true)).toEqual(['cursor only'])
    search.close()
  })

  it('ranks by relevance, and the newer first when equal', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    const older = (await store.append({ session_id, message: user('postgres cursor', 10) })).entry_id
    const newer = (await store.append({ session_id, message: user('postgres cursor', 20) })).entry_id
    const long = (
      await store.append({ session_id, message: user(`postgres ${'filler '.repeat(50)} cursor`, 30) })
    ).entry_id
    const search = await enableSearch(store)
    const { hits } = await search.query({ query: 'postgres cursor' })
    expect(hits.map((h) => h.entry_id)).toEqual([newer, older, long])
    expect(hits[0].score).toBe(hits[1].score)
    expect(hits[1].score).toBeGreaterThan(hits[2].score)
  })

  it('finds a phrase held only by a low-ranked message among many holding its words apart', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    await store.appendMany({
      session_id,
      messages: Array.from({ length: 100 }, (_, i) => user(`postgres open ${i}`)),
    })
    // Longer, so it ranks last by BM25: found only once the best few are used up.
    const { entry_id } = await store.append({
      session_id,
      message: user(`we open postgres ${'and then more words '.repeat(20)}`),
    })
    const search = await enableSearch(store)
    const { hits, incomplete } = await search.query({ query: '"open postgres"', limit: 1 })
    expect(incomplete).toBe(false)
    expect(hits.map((h) => h.entry_id)).toEqual([entry_id])
  })

  it('filters by session, role, dates and active path', async () => {
    const store = await open()
    const a = (await store.create({})).session_id
    const b = (await store.create({})).session_id
    const u = (await store.append({ session_id: a, message: user('needle', 100) })).entry_id
    const r = (await store.append({ session_id: a, message: assistant('needle', 200) })).entry_id
    const other = (await store.append({ session_id: a, parent_id: u, message: assistant('needle', 300) }))
      .entry_id
    const inB = (await store.append({ session_id: b, message: user('needle', 400) })).entry_id
    const search = await enableSearch(store)
    const ids = async (request: object) =>
      (await search.query({ query: 'needle', ...request })).hits.map((h) => h.entry_id).sort()
    expect(await ids({ session_ids: [b] })).toEqual([inB])
    expect(await ids({ roles: ['assistant'] })).toEqual([r, other].sort())
    expect(await ids({ from: 200, to: 400 })).toEqual([r, other].sort())
    // The leaf is the last append (`other`): `r` is on the branch left behind.
    expect(await ids({ session_ids: [a], active_path_only: true })).toEqual([u, other].sort())
    await store.setActiveLeaf({ session_id: a, entry_id: r })
    expect(await ids({ session_ids: [a], active_path_only: true })).toEqual([u, r].sort())
  })
})

describe('live', () => {
  it('query$ gives new matching messages as they are committed', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    const search = await enableSearch(store, { settleMs: 0 })
    const live = search.query$({ query: 'postgr' })
    expect((await firstValueFrom(live)).hits).toEqual([])
    const next = firstValueFrom(live.pipe(filter((r) => r.hits.length > 0)))
    const { entry_id } = await store.append({ session_id, message: user('a postgres cursor') })
    expect((await next).hits.map((h) => h.entry_id)).toEqual([entry_id])
  })

  it('finds a streamed reply by its text so far, before it settles', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    // It would not settle within the test: only the query's own catch-up indexes it.
    const search = await enableSearch(store, { settleMs: 600_000 })
    const { entry_id } = await store.append({ session_id, message: assistant('') })
    let text = ''
    for (const token of ['the ', 'answer ', 'is ', 'forty']) {
      text += token
      void store.updateMessage({ session_id, entry_id, content: [{ type: 'text', text }] })
    }
    await store.flush()
    expect((await search.query({ query: 'forty' })).hits.map((h) => h.entry_id)).toEqual([entry_id])
    search.close()
  })
})
