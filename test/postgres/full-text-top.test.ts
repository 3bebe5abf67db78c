import { createStore } from '@colloquy/core'
import { parseSearchRequest, type SearchResult } from '@colloquy/core/search'
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresFullText } from '../../packages/server/src/search/postgres-search.js'
import { postgresStorage } from '../../packages/server/src/storage/postgres/storage.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

// When a query's candidates are more than a statement reads, PostgreSQL reads the best in order
// (shortest entries first, newest first among equals) and stops once no unread entry can rank in
// the page. Such an answer, when it says it is complete, is the very answer of reading every
// candidate (which test/postgres/search.test.ts compares with a device's): same hits, order and
// scores. Random messages of a small vocabulary (terms repeated, lengths varied), random queries
// and filters, under bounds far below the candidates.

let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

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
  terms: fc.array(fc.nat({ max: WORDS.length - 1 }), { minLength: 1, maxLength: 2 }),
  prefix: fc.boolean(),
  limit: fc.integer({ min: 1, max: 8 }),
  roles: fc.option(fc.constant(['user'])),
  active_path_only: fc.boolean(),
})

describe('full text on PostgreSQL: the best read in order', () => {
  it('a complete answer under a small bound is the answer of reading every candidate', async () => {
    let complete = 0
    let topRead = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(message, { minLength: 1, maxLength: 15 }), { minLength: 1, maxLength: 4 }),
        fc.array(request, { minLength: 1, maxLength: 6 }),
        async (sessions, requests) => {
          const pool = new pg.Pool({ connectionString: await cluster.createDatabase(), max: 2 })
          const store = await createStore({
            storage: postgresStorage({ pool, pollMs: 60_000 }),
            multiTab: false,
          })
          try {
            for (const msgs of sessions) {
              const { session_id } = await store.create({ metadata: { owner: 'alice' } })
              const { entry_ids } = await store.appendMany({
                session_id,
                messages: msgs.map((m) => said(m.role, m.words.map((w) => WORDS[w]).join(' '), m.ts)),
              })
              // A branch: the active path leaves the later messages.
              if (entry_ids.length > 2) await store.setActiveLeaf({ session_id, entry_id: entry_ids[1] })
            }
            const docs = sessions.reduce((n, s) => n + s.length, 0)
            for (const r of requests) {
              const body = {
                query: r.terms.map((t) => WORDS[t].slice(0, r.prefix ? 3 : undefined)).join(' '),
                prefix: r.prefix,
                limit: r.limit,
                ...(r.roles && { roles: r.roles }),
                active_path_only: r.active_path_only,
              }
              const ask = (rows?: number): Promise<SearchResult> =>
                postgresFullText(pool, rows === undefined ? {} : { rows })('alice', parseSearchRequest(body))
              const all = await ask()
              expect(all.incomplete).toBe(false)
              for (const rows of [2, 5]) {
                if (rows >= docs) continue
                topRead++
                const cut = await ask(rows)
                if (cut.incomplete) continue
                complete++
                expect([body, rows, cut]).toStrictEqual([body, rows, all])
              }
            }
          } finally {
            await store.close()
            await pool.end()
          }
        },
      ),
      { numRuns: 25 },
    )
    // Not a property of answers that all gave up: many were proven under the bound.
    expect(topRead).toBeGreaterThan(20)
    expect(complete).toBeGreaterThan(5)
  }, 300_000)
})
