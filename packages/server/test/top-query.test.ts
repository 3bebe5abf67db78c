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
      { numRuns: 60 },
    )
    // Not a property of answers that fit one slice: most took several.
    expect(sliced).toBeGreaterThan(50)
    expect(complete).toBeGreaterThan(100)
  }, 120_000)
})
