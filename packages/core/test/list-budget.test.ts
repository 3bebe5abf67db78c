import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type ListOrder, type SessionMeta } from '../src/index.js'
import { LIST_WORK_BUDGET } from '../src/wire.js'
import { selectSessions } from '../src/ops/select.js'

// `session::list` compares metadata filters on a budget (values compared, counted, never timed)
// and pages with a selection of the first `limit + 1`, not a sort of every session.

describe('session::list work budget', () => {
  it('a filter that would compare more values than the budget is refused; the same list narrowed is answered', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const tags = Array.from({ length: 500 }, (_, i) => i)
    for (let i = 0; i < 2000; i++) await store.create({ title: `s${i}`, metadata: { tags, n: i % 20 } })
    // 2,000 sessions × 500 values compared is past the budget: refused before an answer is built.
    expect(2000 * 500).toBeGreaterThan(LIST_WORK_BUDGET)
    await expect(store.list({ metadata: { tags } })).rejects.toMatchObject({
      code: 'session/invalid_request',
      message: expect.stringContaining('narrow it'),
    })
    // A filter that fails on a cheap key first costs a value or two per session.
    const res = await store.list({ metadata: { n: 99, tags }, limit: 5 })
    expect(res.sessions).toStrictEqual([])
    // A twentieth of them match `n: 1`; their tags are compared (100 × 501 values, within the budget).
    const page = await store.list({ metadata: { n: 1, tags }, limit: 3 })
    expect(page.sessions.map((m) => m.metadata?.n)).toStrictEqual([1, 1, 1])
  })

  it('pages are exactly the sorted, filtered sessions, in any order and page size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            updated: fc.integer({ min: 0, max: 5 }),
            created: fc.integer({ min: 0, max: 5 }),
            tag: fc.constantFrom('a', 'b'),
          }),
          { maxLength: 25 },
        ),
        fc.constantFrom<ListOrder>('updated_desc', 'created_desc', 'created_asc'),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom(undefined, { tag: 'a' }),
        async (rows, order, limit, metadata) => {
          let now = 0
          const store = await createStore({ storage: memoryStorage(), multiTab: false, now: () => now })
          for (const r of rows) {
            now = r.created
            const { session_id } = await store.create({ title: 't', metadata: { tag: r.tag } })
            now = Math.max(r.created, r.updated)
            await store.setMeta({ session_id, title: 'u' })
          }
          const expected = selectSessions(
            [...store.engine.state.sessions.values()].map((s) => s.head.meta),
            { order, metadata },
          ).map((m) => m.session_id)
          const got: string[] = []
          let cursor: string | undefined
          for (let pages = 0; pages < 100; pages++) {
            const page = await store.list({ order, limit, metadata, cursor })
            expect(page.sessions.length).toBeLessThanOrEqual(limit)
            got.push(...page.sessions.map((m: SessionMeta) => m.session_id))
            if (!page.next_cursor) break
            cursor = page.next_cursor
          }
          expect(got).toStrictEqual(expected)
          await store.close()
        },
      ),
      { numRuns: 60 },
    )
  })
})
