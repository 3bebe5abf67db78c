import { filter, firstValueFrom, shareReplay } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage } from '../src/index.js'
import { engineOf } from '../src/store.js'
import { idbStores, user } from './idb-stores.js'

// Issue 28 on Chromium's IndexedDB: opening reads no head, a page reads its own heads only, and a
// tab's live list follows what another tab does to sessions it never loaded (BroadcastChannel).

const { dbName, storeOn } = idbStores('paged-heads')

describe('heads on demand over real IndexedDB (Chromium)', () => {
  it('opens 200 sessions reading no head; a first page of 50 reads 51', async () => {
    const name = dbName()
    let t = 1_000
    const seed = await createStore({ storage: indexedDbStorage({ name }), multiTab: false, now: () => ++t })
    const ids: string[] = []
    for (let i = 0; i < 200; i++) ids.push((await seed.create({ title: `c${i}` })).session_id)
    await seed.close()

    let heads = 0
    const get = IDBObjectStore.prototype.get
    const getAll = IDBObjectStore.prototype.getAll
    IDBObjectStore.prototype.get = function (this: IDBObjectStore, q: IDBValidKey | IDBKeyRange) {
      if (this.name === 'sessions') heads++
      return get.call(this, q)
    }
    IDBObjectStore.prototype.getAll = function (
      this: IDBObjectStore,
      ...a: Parameters<IDBObjectStore['getAll']>
    ) {
      if (this.name === 'sessions') heads += 1e6
      return getAll.apply(this, a)
    }
    try {
      const s = await storeOn(name)
      expect(heads).toBe(0)
      const first = await firstValueFrom(s.sessions$({ limit: 50 }))
      expect(first.map((m) => m.session_id)).toStrictEqual(ids.slice(-50).reverse())
      expect(heads).toBe(50)
      const page = await s.list({ limit: 50 })
      expect(page.sessions).toStrictEqual(first)
      expect(heads).toBe(101)
      // The live list's page seeded the working set (the chat opened next needs no head read);
      // a `list` call's page is the caller's only.
      expect([...engineOf(s).state.sessions.keys()]).toStrictEqual(first.map((m) => m.session_id))
    } finally {
      IDBObjectStore.prototype.get = get
      IDBObjectStore.prototype.getAll = getAll
    }
  })

  it('pages through every order with keyset cursors, filters included, as the full sort has them', async () => {
    const name = dbName()
    let t = 1_000
    const seed = await createStore({ storage: indexedDbStorage({ name }), multiTab: false, now: () => ++t })
    const ids: string[] = []
    for (let i = 0; i < 90; i++) ids.push((await seed.create({ title: `c${i}` })).session_id)
    // Updated out of creation order, some of them twice; a third of them done.
    for (const i of [5, 70, 33, 5, 88, 0, 41])
      await seed.append({ session_id: ids[i]!, message: user(`m${i}`) })
    for (let i = 0; i < 90; i += 3) await seed.setStatus({ session_id: ids[i]!, status: 'done' })
    const all = await Promise.all(ids.map(async (id) => (await seed.get({ session_id: id }))!.meta))
    await seed.close()
    const s = await storeOn(name)
    for (const order of ['updated_desc', 'created_desc', 'created_asc'] as const)
      for (const status of [undefined, 'done'] as const) {
        const seen: string[] = []
        let cursor: string | undefined
        do {
          const page = await s.list({ order, limit: 7, ...(status && { status }), ...(cursor && { cursor }) })
          seen.push(...page.sessions.map((m) => m.session_id))
          cursor = page.next_cursor
        } while (cursor)
        const key = (m: (typeof all)[number]) => (order === 'updated_desc' ? m.updated_at : m.created_at)
        const expected = all
          .filter((m) => !status || m.status === status)
          .sort(
            (a, b) =>
              (key(a) - key(b) || (a.session_id < b.session_id ? -1 : 1)) *
              (order === 'created_asc' ? 1 : -1),
          )
          .map((m) => m.session_id)
        expect(seen, `${order} ${status ?? ''}`).toStrictEqual(expected)
      }
  })

  it("a tab's live list follows another tab's changes to sessions it never loaded", async () => {
    const name = dbName()
    let t = 1_000
    const seed = await createStore({ storage: indexedDbStorage({ name }), multiTab: false, now: () => ++t })
    const ids: string[] = []
    for (let i = 0; i < 20; i++) ids.push((await seed.create({ title: `c${i}` })).session_id)
    await seed.close()
    const a = await storeOn(name)
    const b = await storeOn(name)
    // One subscription throughout: each value after the first comes from a commit, not a new read.
    const live = a.sessions$({ limit: 3 }).pipe(shareReplay(1))
    const sub = live.subscribe()
    const showing = (want: string[]) =>
      firstValueFrom(live.pipe(filter((l) => l.map((m) => m.session_id).join() === want.join())))
    await showing(ids.slice(-3).reverse())
    await b.append({ session_id: ids[0], message: user('up') })
    await showing([ids[0], ids[19], ids[18]])
    await b.delete({ session_id: ids[19] })
    await showing([ids[0], ids[18], ids[17]])
    const made = await b.create({ title: 'new' })
    await showing([made.session_id, ids[0], ids[18]])
    sub.unsubscribe()
  })
})
