import { createStore, memoryStorage } from '@colloquy/core'
import { enableSearch, type SearchResult } from '@colloquy/core/search'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { topQuery } from '../src/search/top-query.js'

// The file storage's search reads the rarest term's postings in slices of work and looks the
// other terms up only where a document could still rank in the page. Its answer, when it says
// it is complete, is the very answer of scoring every candidate (core's `runQuery` with no
// bound): same hits, order, scores and snippets. Random messages of a small vocabulary (terms
// repeated, lengths varied, messages overwritten and sessions deleted, so the index holds dead
// documents), random queries and filters, under work budgets far below the candidates.

const WORDS = ['kiwi', 'plum', 'fig', 'pear', 'lime']
const said = (role: 'user' | 'assistant', text: string, timestamp: number) =>
  role === 'user'
    ? { role, content: [{ type: 'text' as const, text }], timestamp }
    : {
        role,
        content: [{ type: 'text' as const, text }],
        timestamp,
        stop_reason: 'end' as const,
        model: 'm',
        provider: 'p',
      }

const message = fc.record({
  words: fc.array(fc.nat({ max: WORDS.length - 1 }), { minLength: 1, maxLength: 12 }),
  role: fc.constantFrom('user' as const, 'assistant' as const),
  // Few distinct times: ties on the score and the time are common.
  ts: fc.nat({ max: 6 }),
})
const request = fc.record({
  terms: fc.array(fc.nat({ max: WORDS.length - 1 }), { minLength: 1, maxLength: 3 }),
  prefix: fc.boolean(),
  phrase: fc.boolean(),
  limit: fc.integer({ min: 1, max: 8 }),
  roles: fc.option(fc.constant(['user'])),
  from: fc.option(fc.nat({ max: 6 })),
  session: fc.option(fc.nat({ max: 3 })),
  active_path_only: fc.boolean(),
})

describe('top-k over the index: the best read in slices', () => {
  it('a complete answer under a small budget is the answer of scoring every candidate', async () => {
    let sliced = 0
    let complete = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(message, { minLength: 1, maxLength: 15 }), { minLength: 1, maxLength: 4 }),
        fc.array(request, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        async (sessions, requests, churn) => {
          const store = await createStore({ storage: memoryStorage(), multiTab: false })
          const ids: string[] = []
          for (const msgs of sessions) {
            const { session_id } = await store.create({ title: WORDS[msgs.length % WORDS.length] })
            ids.push(session_id)
            const { entry_ids } = await store.appendMany({
              session_id,
              messages: msgs.map((m) => said(m.role, m.words.map((w) => WORDS[w]).join(' '), m.ts)),
            })
            // A branch: the active path leaves the later messages.
            if (entry_ids.length > 2) await store.setActiveLeaf({ session_id, entry_id: entry_ids[1] })
          }
          let pauses = 0
          const all = await enableSearch(store, { persist: false, workBudget: Number.MAX_SAFE_INTEGER })
          const bounded = (budget: number, slices: number) =>
            enableSearch(store, {
              persist: false,
              workBudget: budget,
              run: topQuery(async () => void pauses++, slices),
            })
          const tops = [await bounded(30, 1_000_000), await bounded(40, 3)]
          try {
            for (const s of tops) await s.query({ query: 'kiwi' })
            if (churn) {
              // Dead documents in the lists: a session gone, and one more written after.
              await store.delete({ session_id: ids[0] })
              const { session_id } = await store.create({})
              await store.appendMany({
                session_id,
                messages: sessions[0].map((m) => said(m.role, m.words.map((w) => WORDS[w]).join(' '), m.ts)),
              })
              ids[0] = session_id
            }
            for (const r of requests) {
              const body = {
                query:
                  r.phrase && !r.prefix && r.terms.length > 1
                    ? `"${r.terms.map((t) => WORDS[t]).join(' ')}"`
                    : r.terms.map((t) => WORDS[t].slice(0, r.prefix ? 2 : undefined)).join(' '),
                prefix: r.prefix,
                limit: r.limit,
                ...(r.roles && { roles: r.roles }),
                ...(r.from !== null && { from: r.from }),
                ...(r.session !== null && ids[r.session] && { session_ids: [ids[r.session]] }),
                active_path_only: r.active_path_only,
              }
              const exact = await all.query(body)
              expect(exact.incomplete).toBe(false)
              for (const [n, top] of tops.entries()) {
                const before = pauses
                const cut: SearchResult = await top.query(body)
                if (pauses > before) sliced++
                // Slices without a bound on their number: always whole.
                if (n === 0) expect(cut.incomplete).toBe(false)
                if (cut.incomplete) continue
                complete++
                expect([body, n, cut]).toStrictEqual([body, n, exact])
              }
            }
          } finally {
            all.close()
            for (const s of tops) s.close()
            await store.close()
          }
        },
      ),
      { numRuns: 300 },
    )
    // Not a property of answers that fit one slice: most took several.
    expect(sliced).toBeGreaterThan(50)
    expect(complete).toBeGreaterThan(100)
  }, 120_000)

  it('the best document read last is found: look-ups are skipped only below what a document can weigh', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    // Read first (newest): short messages holding each word once, then long ones. Read last
    // (oldest): the best, as short and holding both words twice.
    const { session_id: old } = await store.create({})
    await store.append({ session_id: old, message: said('user', 'kiwi plum kiwi plum', 1) })
    const { session_id } = await store.create({})
    await store.appendMany({
      session_id,
      messages: Array.from({ length: 40 }, (_, i) =>
        said('user', `kiwi plum ${'fig '.repeat(10 + i)}`, 2 + i),
      ),
    })
    const { session_id: recent } = await store.create({})
    await store.appendMany({
      session_id: recent,
      messages: Array.from({ length: 3 }, (_, i) => said('user', 'kiwi plum fig fig', 50 + i)),
    })
    const all = await enableSearch(store, { persist: false, workBudget: Number.MAX_SAFE_INTEGER })
    let pauses = 0
    const top = await enableSearch(store, {
      persist: false,
      workBudget: 20,
      run: topQuery(async () => void pauses++),
    })
    try {
      for (const limit of [1, 2]) {
        const exact = await all.query({ query: 'kiwi plum ', limit })
        expect(exact.hits[0].session_id).toBe(old)
        expect(await top.query({ query: 'kiwi plum ', limit })).toStrictEqual(exact)
      }
      expect(pauses).toBeGreaterThan(2)
    } finally {
      all.close()
      top.close()
      await store.close()
    }
  })
})
