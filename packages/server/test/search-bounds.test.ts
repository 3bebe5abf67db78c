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
})
