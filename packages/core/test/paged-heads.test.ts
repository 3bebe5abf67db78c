import 'fake-indexeddb/auto'
import fc from 'fast-check'
import { firstValueFrom, filter, shareReplay } from 'rxjs'
import { describe, expect, it } from 'vitest'
import {
  createStore,
  indexedDbStorage,
  memoryStorage,
  ORDERS,
  type SessionKind,
  type SessionMeta,
  type SessionStatus,
  type Storage,
  type Store,
} from '../src/index.js'
import { engineOf } from '../src/store.js'
import { hostOf } from '../src/host.js'
import { selectSessions } from '../src/ops/select.js'

// Issue 28: a store over a storage with paged reads opens without reading heads, lists through
// the storage's order indexes with keyset cursors, reads a head on first use and keeps a
// bounded working set of them.

let n = 0
const dbName = (): string => `paged-heads-${Date.now()}-${++n}`
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

/** Counts records read from the `sessions` store (heads) and the order records walked. */
function countReads(): { heads: number; orders: number; stop(): void } {
  const c = { heads: 0, orders: 0, stop: () => {} }
  const store = IDBObjectStore.prototype
  const get = store.get
  const getAll = store.getAll
  const cursorContinue = IDBCursor.prototype.continue
  const openCursor = IDBIndex.prototype.openCursor
  store.get = function (this: IDBObjectStore, q: IDBValidKey | IDBKeyRange) {
    if (this.name === 'sessions') c.heads++
    return get.call(this, q)
  }
  store.getAll = function (this: IDBObjectStore, ...a: Parameters<IDBObjectStore['getAll']>) {
    // Every head at once: what opening did before.
    if (this.name === 'sessions') c.heads += 1e6
    return getAll.apply(this, a)
  }
  IDBIndex.prototype.openCursor = function (this: IDBIndex, ...a: Parameters<IDBIndex['openCursor']>) {
    if (this.objectStore.name === 'order') c.orders++
    return openCursor.apply(this, a)
  }
  IDBCursor.prototype.continue = function (this: IDBCursor, ...a: Parameters<IDBCursor['continue']>) {
    if ((this.source as IDBIndex).objectStore?.name === 'order') c.orders++
    return cursorContinue.apply(this, a)
  }
  c.stop = () => {
    store.get = get
    store.getAll = getAll
    IDBIndex.prototype.openCursor = openCursor
    IDBCursor.prototype.continue = cursorContinue
  }
  return c
}

async function fill(s: Store, count: number, now: { t: number }): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    now.t++
    const { session_id } = await s.create({ title: `s${i}`, metadata: { i, odd: i % 2 === 1 } })
    ids.push(session_id)
  }
  return ids
}

describe('opening and listing without every head (paged reads)', () => {
  it('opens 300 sessions reading no head, and a first page of 20 reads 21 heads and order records', async () => {
    const name = dbName()
    const now = { t: 1_000 }
    const a = await createStore({ storage: indexedDbStorage({ name }), multiTab: false, now: () => now.t })
    const ids = await fill(a, 300, now)
    await a.close()

    const reads = countReads()
    try {
      const b = await createStore({ storage: indexedDbStorage({ name }), multiTab: false, prefetch: false })
      expect(reads.heads).toBe(0)
      expect(engineOf(b).state.sessions.size).toBe(0)
      const page = await b.list({ limit: 20 })
      expect(page.sessions.map((m) => m.session_id)).toStrictEqual(ids.slice(-20).reverse())
      expect(reads.heads).toBe(21)
      expect(reads.orders).toBeLessThanOrEqual(22)
      const next = await b.list({ limit: 20, cursor: page.next_cursor })
      expect(next.sessions.map((m) => m.session_id)).toStrictEqual(ids.slice(-40, -20).reverse())
      expect(reads.heads).toBe(42)
      // A session's head is read on its first use.
      const before = reads.heads
      expect((await b.get({ session_id: ids[3] }))?.meta.title).toBe('s3')
      expect(reads.heads).toBe(before + 1)
      // A mention's view and search reach sessions whose heads are not held.
      expect((await b.mentionGet({ id: ids[5] }))?.label).toBe('s5')
      const found = await b.mentionSearch({ query: 's7', limit: 50 })
      expect(found.items.map((i) => i.id)).toContain(ids[7])
      await b.close()
    } finally {
      reads.stop()
    }
  })

  it('keeps a bounded working set of heads, however many sessions are used', async () => {
    const now = { t: 1_000 }
    const storage = memoryStorage({ paged: true })
    const s = await createStore({ storage, multiTab: false, now: () => now.t, maxHeads: 10 })
    const ids = await fill(s, 60, now)
    for (const id of ids) await s.setMeta({ session_id: id, title: `t-${id}` })
    await s.flush()
    expect(engineOf(s).state.sessions.size).toBeLessThanOrEqual(10)
    // What was let go is read again on use, as it is on disk.
    expect((await s.get({ session_id: ids[0] }))?.meta.title).toBe(`t-${ids[0]}`)
    await s.append({ session_id: ids[1], message: user('hi') })
    expect((await s.get({ session_id: ids[1] }))?.meta.message_count).toBe(1)
    await s.close()
  })

  it("a host walks every session's head, loaded or not, a page at a time", async () => {
    const now = { t: 1_000 }
    const s = await createStore({
      storage: memoryStorage({ paged: true }),
      multiTab: false,
      now: () => now.t,
      maxHeads: 5,
    })
    const ids = await fill(s, 1_100, now)
    await s.flush()
    const host = hostOf(s)
    expect(host.allHeld).toBe(false)
    expect([...host.heads()].length).toBeLessThanOrEqual(5)
    const walked: string[] = []
    for await (const head of host.everyHead()) walked.push(head.meta.session_id)
    expect(walked).toStrictEqual(ids)
    await s.close()
  })

  it('refuses a working set bound that is not a positive integer', async () => {
    for (const maxHeads of [0, -1, 1.5, Number.NaN, Infinity])
      await expect(
        createStore({ storage: memoryStorage({ paged: true }), multiTab: false, maxHeads }),
      ).rejects.toMatchObject({
        code: 'session/invalid_request',
      })
  })

  it('ensure stays idempotent for a session whose head is not held', async () => {
    const name = dbName()
    const a = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
    const first = await a.ensure({ session_id: 'fixed', title: 'one' })
    await a.close()
    const b = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
    const again = await b.ensure({ session_id: 'fixed', title: 'two' })
    expect(again).toStrictEqual({ ...first, created: false })
    expect((await b.list()).sessions.map((m) => m.title)).toStrictEqual(['one'])
    await b.close()
  })

  it('a live list follows changes another tab makes to sessions this one never loaded', async () => {
    const name = dbName()
    const now = { t: 1_000 }
    const seed = await createStore({ storage: indexedDbStorage({ name }), multiTab: false, now: () => now.t })
    const ids = await fill(seed, 30, now)
    await seed.close()
    const a = await createStore({ storage: indexedDbStorage({ name }), now: () => now.t })
    const b = await createStore({ storage: indexedDbStorage({ name }), now: () => now.t })
    // One subscription throughout: each value after the first comes from a commit, not a new read.
    const live = a.sessions$({ limit: 5 }).pipe(shareReplay(1))
    const sub = live.subscribe()
    const top = (want: string[]) =>
      firstValueFrom(live.pipe(filter((l) => l.map((m) => m.session_id).join() === want.join())))
    await top(ids.slice(-5).reverse())
    // An old session, never read here, gets a message in the other tab: it goes to the top.
    now.t += 10
    await b.append({ session_id: ids[2], message: user('back') })
    await top([ids[2], ...ids.slice(-4).reverse()])
    expect(engineOf(a).state.sessions.has(ids[7])).toBe(false)
    // A session of the page deleted there: the page is read again and filled.
    await b.delete({ session_id: ids[29] })
    await top([ids[2], ...ids.slice(-5, -1).reverse()])
    sub.unsubscribe()
    await a.close()
    await b.close()
  })
})

const STATUSES: SessionStatus[] = ['idle', 'working', 'done', 'error']
const KINDS: SessionKind[] = ['user', 'automation', 'e2e']

describe('paging with cursors equals the full sort (property)', () => {
  // Each run's storage, opened again by a second store on the same data.
  const storages: Array<[string, () => () => Storage]> = [
    [
      'indexedDB',
      () => {
        const name = dbName()
        return () => indexedDbStorage({ name })
      },
    ],
    [
      'memory',
      () => {
        const m = memoryStorage({ paged: true })
        return () => m
      },
    ],
  ]
  for (const [label, make] of storages) {
    it(`${label}: every order, filter and page size`, async () => {
      let listed = 0
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              created: fc.integer({ min: 0, max: 5 }),
              touched: fc.option(fc.integer({ min: 0, max: 5 })),
              status: fc.constantFrom(...STATUSES),
              kind: fc.constantFrom(...KINDS),
              tag: fc.integer({ min: 0, max: 2 }),
              gone: fc.boolean(),
            }),
            { minLength: 4, maxLength: 25 },
          ),
          fc.constantFrom(...ORDERS),
          fc.integer({ min: 1, max: 7 }),
          // Each filter absent half the time: combined, most runs list something.
          fc.constantFrom(null, null, null, ...STATUSES),
          fc.constantFrom(null, null, null, ...KINDS),
          fc.constantFrom(null, null, null, 0, 1, 2),
          async (specs, order, limit, status, kind, tag) => {
            const now = { t: 0 }
            const open = make()
            const s = await createStore({
              storage: open(),
              multiTab: false,
              now: () => now.t,
              prefetch: false,
            })
            for (const [i, spec] of specs.entries()) {
              now.t = spec.created
              const session_id = `s${(i * 7919) % 101}`
              await s.ensure({
                session_id,
                kind: spec.kind,
                metadata: { tag: spec.tag },
              })
              await s.setStatus({ session_id, status: spec.status })
              if (spec.touched !== null) {
                now.t = spec.created + spec.touched
                await s.append({ session_id, message: user('x') })
              }
              if (spec.gone) await s.delete({ session_id })
            }
            // A fresh store: nothing held, everything read through the storage's pages.
            await s.close()
            const t = await createStore({ storage: open(), multiTab: false, prefetch: false })
            const req = {
              order,
              ...(status !== null && { status }),
              ...(kind !== null && { kinds: [kind] }),
              ...(tag !== null && { metadata: { tag } }),
            }
            const all: SessionMeta[] = []
            let cursor: string | undefined
            do {
              const page = await t.list({ ...req, limit, cursor })
              expect(page.sessions.length).toBeLessThanOrEqual(limit)
              all.push(...page.sessions)
              cursor = page.next_cursor
            } while (cursor)
            const metas = await Promise.all(
              specs.map((_, i) => t.get({ session_id: `s${(i * 7919) % 101}` })),
            )
            const held = [...new Map(metas.flatMap((m) => (m ? [[m.meta.session_id, m.meta]] : []))).values()]
            expect(all.map((m) => m.session_id)).toStrictEqual(
              selectSessions(held, req).map((m) => m.session_id),
            )
            listed += all.length
            await t.close()
          },
        ),
        { numRuns: 60 },
      )
      // The runs listed sessions (not only empty pages).
      expect(listed).toBeGreaterThan(40)
    })
  }
})
