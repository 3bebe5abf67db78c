import { createStore, memoryStorage } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { describe, expect, it } from 'vitest'
import { ServerSearch } from '../src/search/server-search.js'
import { Tenancy } from '../src/tenancy.js'

const user = (text: string, timestamp: number) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp,
})

describe('ServerSearch: what the kept indexes hold', () => {
  it('indexes are let go past a bound on the messages they hold, not only on their number; answers stay whole', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const principals = ['ann', 'ben', 'cat', 'dan']
    // Each principal: two sessions of 15 messages (30 each), every message holding "kiwi".
    for (const p of principals)
      for (let s = 0; s < 2; s++) {
        const { session_id } = await store.create({ title: `${p} ${s}`, metadata: { owner: p } })
        for (let i = 0; i < 15; i++)
          await store.append({ session_id, message: user(`kiwi ${p} ${s} ${i}`, i) })
      }
    const search = new ServerSearch(store, new Tenancy(hostOf(store)), undefined, {
      indexes: 32,
      messages: 70,
    })
    try {
      const ask = (p: string) => search.query({ kind: 'owner', owner: p }, { query: `kiwi ${p}`, limit: 100 })
      for (const [n, p] of principals.entries()) {
        const answer = await ask(p)
        expect(answer.incomplete).toBe(false)
        expect(answer.hits).toHaveLength(30)
        expect(new Set(answer.hits.map((h) => h.session_id)).size).toBe(2)
        // 30 messages each: two indexes fit under 70, a third pushes the oldest out.
        expect(search.held).toStrictEqual({ indexes: Math.min(n + 1, 2), messages: Math.min(n + 1, 2) * 30 })
      }
      // Ann's index was let go: her next search builds it again, with what was committed since.
      const [ann] = await store.list({ metadata: { owner: 'ann' }, limit: 1 }).then((r) => r.sessions)
      await store.append({ session_id: ann.session_id, message: user('kiwi ann late', 99) })
      const again = await ask('ann')
      expect(again.hits).toHaveLength(31)
      expect(search.held).toStrictEqual({ indexes: 2, messages: 61 })
      // One principal above the bound alone is still kept (the latest search is always answered from memory).
      const big = new ServerSearch(store, new Tenancy(hostOf(store)), undefined, { messages: 10 })
      try {
        expect(
          (await big.query({ kind: 'owner', owner: 'ben' }, { query: 'kiwi', limit: 5 })).hits,
        ).toHaveLength(5)
        expect(big.held).toStrictEqual({ indexes: 1, messages: 30 })
      } finally {
        big.close()
      }
    } finally {
      search.close()
      store.close()
    }
  })

  it("a query over words every message holds is answered whole a slice at a time, another principal's answered between the slices", async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    // Carol: 3,000 messages, each holding "fox" and "dog"; Bob: one session.
    for (let s = 0; s < 30; s++) {
      const { session_id } = await store.create({ metadata: { owner: 'carol' } })
      await store.appendMany({
        session_id,
        messages: Array.from({ length: 100 }, (_, i) => user(`the fox ${s} and the dog ${i}`, s * 100 + i)),
      })
    }
    const { session_id: bobs } = await store.create({ metadata: { owner: 'bob' } })
    await store.append({ session_id: bobs, message: user('kiwi', 1) })
    // Slices of 1,000 units: Carol's query reads 3,000 postings of the other word for its largest count, then 3,000 of the rarer at two units each.
    const search = new ServerSearch(store, new Tenancy(hostOf(store)), undefined, { slice: 1000 })
    try {
      const carol = { kind: 'owner', owner: 'carol' } as const
      const bob = { kind: 'owner', owner: 'bob' } as const
      // Both indexes built first: what is measured is the query alone.
      await search.query(carol, { query: 'zebra' })
      await search.query(bob, { query: 'kiwi' })
      let done = false
      const answer = search.query(carol, { query: 'fox dog ', limit: 5 }).finally(() => (done = true))
      let answered = 0
      while (!done) {
        // A request comes in as an event (as off the network), not as a continuation of the last.
        await new Promise((resolve) => setImmediate(resolve))
        expect((await search.query(bob, { query: 'kiwi' })).hits).toHaveLength(1)
        if (!done) answered++
      }
      const { hits, incomplete } = await answer
      // Whole: the newest five (every message weighs alike but for its length).
      expect(incomplete).toBe(false)
      expect(hits.map((h) => h.timestamp)).toStrictEqual([2999, 2998, 2997, 2996, 2995])
      expect(answered).toBeGreaterThanOrEqual(5)
    } finally {
      search.close()
      store.close()
    }
  })
})
