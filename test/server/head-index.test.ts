import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ListOrder, SessionHead, SessionKind, SessionMeta, SessionStatus } from '@colloquy/core'
import { compareFor, positionOf } from '@colloquy/core/host'
import { HeadIndex } from '../../packages/server/src/storage/file/head-index.js'

// The file storage's head index pages exactly as a sort of every head would, whatever sequence of
// writes and deletions kept its sorted keys: checked against that sort (the core's comparator).

const head = (
  id: string,
  created: number,
  updated: number,
  status: SessionStatus,
  owner: string,
): SessionHead => ({
  meta: {
    session_id: id,
    title: id,
    description: '',
    status,
    kind: status === 'idle' ? 'user' : 'automation',
    created_at: created,
    updated_at: updated,
    message_count: 0,
    metadata: { owner },
  },
  leaf: null,
  v: 1,
})

const ORDERS: ListOrder[] = ['created_asc', 'created_desc', 'updated_desc']

describe('the head index pages as a full sort would', () => {
  it('every order, cursor, status, kind and metadata filter, after any writes and deletions', async () => {
    const id = fc.constantFrom(...'abcdefghijklmnop'.split(''))
    // Few distinct times: many ties, broken by id.
    const time = fc.integer({ min: 0, max: 5 })
    const op = fc.oneof(
      fc.record({
        set: id,
        created: time,
        updated: time,
        status: fc.constantFrom<SessionStatus>('idle', 'working'),
        owner: fc.constantFrom('alice', 'bob'),
      }),
      fc.record({ del: id }),
    )
    const query = fc.record({
      order: fc.constantFrom(...ORDERS),
      after: fc.option(fc.record({ k: time, id }), { nil: undefined }),
      status: fc.constantFrom<SessionStatus | null>(null, 'idle', 'working'),
      kinds: fc.constantFrom<SessionKind[] | null>(null, ['user'], ['automation'], ['user', 'automation']),
      owner: fc.constantFrom(undefined, 'alice', 'bob'),
      limit: fc.integer({ min: 1, max: 20 }),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 60 }),
        fc.array(query, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 60 }),
        async (ops, queries, pageAt) => {
          const index = new HeadIndex()
          const all = new Map<string, SessionHead>()
          for (const [i, o] of ops.entries()) {
            // Keys are built by a first page, then kept up to date by each write.
            if (i === pageAt) await index.page({ order: 'updated_desc', limit: 1 })
            if (i === pageAt) await index.page({ order: 'created_asc', limit: 1 })
            if ('del' in o) {
              index.delete(o.del)
              all.delete(o.del)
            } else {
              const h = head(o.set, o.created, o.updated, o.status, o.owner)
              index.set(o.set, { head: h, bytes: o.created + 1 })
              all.set(o.set, h)
            }
          }
          for (const q of queries) {
            const cmp = compareFor(q.order)
            const accept =
              q.owner === undefined ? undefined : (m: SessionMeta) => m.metadata?.owner === q.owner
            const expected = [...all.values()]
              .filter(
                (h) =>
                  (q.status === null || h.meta.status === q.status) &&
                  (q.kinds === null || q.kinds.includes(h.meta.kind)) &&
                  (!q.after || cmp(positionOf(h.meta, q.order), q.after) > 0) &&
                  (!accept || accept(h.meta)),
              )
              .sort((a, b) => cmp(positionOf(a.meta, q.order), positionOf(b.meta, q.order)))
              .slice(0, q.limit)
            const got = await index.page({ ...q, ...(accept && { accept }) })
            expect(got.map((h) => h.meta.session_id)).toStrictEqual(expected.map((h) => h.meta.session_id))
          }
          // The per-owner sums follow every write.
          for (const owner of ['alice', 'bob']) {
            const mine = [...all.values()].filter((h) => h.meta.metadata?.owner === owner)
            expect(index.usageOf(owner)).toStrictEqual({
              sessions: mine.length,
              bytes: mine.reduce((n, h) => n + h.meta.created_at + 1, 0),
            })
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('walks a slice of keys per turn whichever filter turns them down, and goes on past writes made between turns', async () => {
    const index = new HeadIndex()
    const N = 10_000
    for (let i = 0; i < N; i++)
      index.set(`s-${String(i).padStart(5, '0')}`, { head: head(`s-${i}`, i, i, 'idle', 'alice'), bytes: 1 })
    // Turns of the event loop while a page runs; a session written at each turn.
    let written = 0
    const turns = async <T>(read: Promise<T>): Promise<{ result: T; turns: number }> => {
      let n = 0
      let done = false
      const tick = (): void => {
        if (done) return
        n++
        written++
        const id = `w-${written}`
        index.set(id, { head: head(id, N + written, N + written, 'working', 'alice'), bytes: 1 })
        setImmediate(tick)
      }
      setImmediate(tick)
      const result = await read
      done = true
      return { result, turns: n }
    }
    // No session is `error`: the status filter turns every key down, as a kinds or metadata filter would.
    for (const q of [
      { status: 'error' as const },
      { kinds: ['e2e' as const] },
      { accept: (m: SessionMeta) => m.metadata?.owner === 'bob' },
    ]) {
      const { result, turns: n } = await turns(index.page({ order: 'created_asc', limit: 10, ...q }))
      expect(result).toEqual([])
      expect(n, JSON.stringify(Object.keys(q))).toBeGreaterThanOrEqual(3)
    }
    // The sessions written between turns are found by a page that wants them.
    const working = await index.page({ order: 'created_desc', limit: 5, status: 'working' })
    expect(working.map((h) => h.meta.session_id)).toEqual(
      Array.from({ length: Math.min(5, written) }, (_, i) => `w-${written - i}`),
    )
  })
})
