import 'fake-indexeddb/auto'
import { describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage, type Store } from '../src/index.js'

// Two stores on one IndexedDB database stand for two tabs without the relay (multiTab off):
// the contract's atomic append (2.9, "bridge-safety") must hold through storage alone, because
// the leaf read and the write share one transaction.
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

let db = 0
async function twoTabs(): Promise<[Store, Store]> {
  const name = `two-stores-${process.pid}-${++db}`
  // Distinct id prefixes, as two tabs' random ids would be.
  const open = (tab: string) => {
    let n = 0
    return createStore({
      storage: indexedDbStorage({ name }),
      multiTab: false,
      now: () => 1_000_000,
      newId: (k) => `${k === 'session' ? 's' : 'e'}_${tab}${++n}`,
    })
  }
  const stores: [Store, Store] = [await open('a'), await open('b')]
  names.set(stores[0], name)
  return stores
}
const names = new WeakMap<Store, string>()
/** A third store on the same database, opened now. */
const open3 = (a: Store): Promise<Store> =>
  createStore({
    storage: indexedDbStorage({ name: names.get(a)! }),
    multiTab: false,
    now: () => 1_000_000,
    newId: () => 'unused',
  })

describe('two stores on one database', () => {
  it('appends issued at once from both form one chain holding every entry once', async () => {
    const [a, b] = await twoTabs()
    await a.ensure({ session_id: 'chat' })
    const sent = await Promise.all([
      ...['a1', 'a2', 'a3'].map((t) => a.append({ session_id: 'chat', message: user(t) })),
      ...['b1', 'b2', 'b3'].map((t) => b.append({ session_id: 'chat', message: user(t) })),
    ])
    // Without the relay, reads are served from each store's memory; the store whose batch
    // committed last and a third store opened afterwards both see what is on disk. (Which
    // commits last depends on which transaction opened first: a store that has not read the
    // session yet reads it inside its transaction, and opens it sooner.)
    const c = await open3(a)
    const last = (await c.messages({ session_id: 'chat' })).messages.at(-1)!.entry_id
    const lastStore = sent.findIndex((r) => r.entry_id === last) < 3 ? a : b
    for (const store of [lastStore, c]) {
      const path = (await store.messages({ session_id: 'chat' })).messages.map((m) => m.entry_id)
      expect(path).toHaveLength(6)
      expect(new Set(path)).toStrictEqual(new Set(sent.map((r) => r.entry_id)))
      expect((await store.get({ session_id: 'chat' }))?.meta.message_count).toBe(6)
    }
    // Every append's parent is the entry committed just before it: a single chain, no siblings.
    const parents = sent.map((r) => r.parent_id)
    expect(new Set(parents).size).toBe(6)
    // The store that read a stale leaf catches up at its next write instead of branching.
    const next = await a.append({ session_id: 'chat', message: user('a4') })
    expect(next.parent_id).toBe((await c.messages({ session_id: 'chat' })).messages.at(-1)!.entry_id)
    await Promise.all([a.close(), b.close(), c.close()])
  })

  it('the same entry_id sent from both commits once', async () => {
    const [a, b] = await twoTabs()
    await a.ensure({ session_id: 'chat' })
    const [ra, rb] = await Promise.all([
      a.append({ session_id: 'chat', message: user('from a'), entry_id: 'turn-1' }),
      b.append({ session_id: 'chat', message: user('from b'), entry_id: 'turn-1' }),
    ])
    expect(ra).toStrictEqual(rb)
    for (const store of [a, b]) {
      expect((await store.messages({ session_id: 'chat' })).messages).toHaveLength(1)
      expect((await store.get({ session_id: 'chat' }))?.meta.message_count).toBe(1)
    }
    await Promise.all([a.close(), b.close()])
  })

  it('expected_revision lets exactly one of two racing updates win', async () => {
    const [a, b] = await twoTabs()
    await a.ensure({ session_id: 'chat' })
    await a.append({ session_id: 'chat', message: user('draft'), entry_id: 'm' })
    const results = await Promise.all([
      a.updateMessage({
        session_id: 'chat',
        entry_id: 'm',
        content: [{ type: 'text', text: 'a' }],
        expected_revision: 0,
      }),
      b.updateMessage({
        session_id: 'chat',
        entry_id: 'm',
        content: [{ type: 'text', text: 'b' }],
        expected_revision: 0,
      }),
    ])
    expect(results.map((r) => r.updated).sort()).toStrictEqual([false, true])
    expect(results.map((r) => r.revision)).toStrictEqual([1, 1])
    const winner = results[0].updated ? 'a' : 'b'
    for (const store of [a, b]) {
      const entry = (await store.getMessage({ session_id: 'chat', entry_id: 'm' }))?.entry
      expect(entry).toMatchObject({ revision: 1, message: { content: [{ type: 'text', text: winner }] } })
    }
    await Promise.all([a.close(), b.close()])
  })

  it('a session deleted by one is gone for the other at its next write', async () => {
    const [a, b] = await twoTabs()
    await a.ensure({ session_id: 'chat' })
    await b.append({ session_id: 'chat', message: user('hi') })
    await a.delete({ session_id: 'chat' })
    await expect(b.append({ session_id: 'chat', message: user('late') })).rejects.toMatchObject({
      code: 'session/not_found',
    })
    expect(await b.get({ session_id: 'chat' })).toBeNull()
    await Promise.all([a.close(), b.close()])
  })
})
