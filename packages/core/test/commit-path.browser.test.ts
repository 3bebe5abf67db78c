import { afterEach, describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage, type Store } from '../src/index.js'
import { idbStores, user } from './idb-stores.js'

// The commit path over real IndexedDB in Chromium: a batch built from memory checks its heads
// inside its transaction, batches are started while the one before commits, and what two stores
// on one database write at once all lands, in order.

const { dbName, storeOn } = idbStores('commit-path')
const quiet: Store[] = []
afterEach(async () => {
  for (const s of quiet.splice(0)) await s.close()
})
/** A store without the multi-tab relay: it learns of the other's writes only from the disk. */
const silentOn = async (name: string): Promise<Store> => {
  const s = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
  quiet.push(s)
  return s
}
/** One macrotask (a MessageChannel round trip), as a stream of tokens arrives. */
const macrotask = (): Promise<void> =>
  new Promise((resolve) => {
    const c = new MessageChannel()
    c.port1.onmessage = () => {
      c.port1.close()
      resolve()
    }
    c.port2.postMessage(0)
  })

describe('commit path over real IndexedDB', () => {
  it('a head another store changed is found inside the transaction: the append runs again and chains', async () => {
    const name = dbName()
    const a = await silentOn(name)
    const b = await silentOn(name)
    const { session_id } = await a.create({})
    const a1 = await a.append({ session_id, message: user('a1') })
    const b1 = await b.append({ session_id, message: user('b1') })
    expect(b1.parent_id).toBe(a1.entry_id)
    const added: string[] = []
    a.on('session::message-added').subscribe((p) => added.push(p.entry_id))
    const reruns = a.engine.reruns
    // a still holds a1 as the leaf: its batch is built on that and must not commit as is.
    const a2 = await a.append({ session_id, message: user('a2') })
    expect(a.engine.reruns).toBe(reruns + 1)
    expect(a2.parent_id).toBe(b1.entry_id)
    expect(added).toStrictEqual([a2.entry_id])
    const c = await silentOn(name)
    for (const s of [a, c]) {
      expect((await s.messages({ session_id })).messages.map((m) => m.entry_id)).toStrictEqual([
        a1.entry_id,
        b1.entry_id,
        a2.entry_id,
      ])
      expect((await s.get({ session_id }))?.meta.message_count).toBe(3)
    }
  })

  it('appends streamed one per macrotask are pipelined, and commit, resolve and emit in issue order', async () => {
    const store = await storeOn(dbName())
    const { session_id } = await store.create({})
    // Counts read-write transactions opened while an earlier one has not completed yet.
    const proto = IDBDatabase.prototype
    const original = proto.transaction
    let open = 0
    let overlapped = 0
    proto.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
      const tx = original.apply(this, args)
      if (args[1] === 'readwrite') {
        if (open > 0) overlapped++
        open++
        const end = (): void => void open--
        tx.addEventListener('complete', end)
        tx.addEventListener('abort', end)
      }
      return tx
    } as IDBDatabase['transaction']
    const added: string[] = []
    const seen: number[] = []
    store.on('session::message-added').subscribe((p) => added.push(p.entry_id))
    store.messages$({ session_id }).subscribe((items) => seen.push(items.length))
    const settled: number[] = []
    const writes: Array<Promise<{ entry_id: string; parent_id: string | null }>> = []
    try {
      for (let i = 0; i < 60; i++) {
        writes.push(store.append({ session_id, message: user(`m${i}`) }).then((r) => (settled.push(i), r)))
        await macrotask()
      }
      await Promise.all(writes)
    } finally {
      proto.transaction = original
    }
    const results = await Promise.all(writes)
    expect(overlapped).toBeGreaterThan(0)
    // The batch before had always committed when the next one's check ran: nothing ran twice.
    expect(store.engine.reruns).toBe(0)
    expect(settled).toStrictEqual([...Array(60).keys()])
    expect(added).toStrictEqual(results.map((r) => r.entry_id))
    // One chain in issue order: every append's parent is the one issued before it.
    expect(results.map((r) => r.parent_id)).toStrictEqual([
      null,
      ...results.slice(0, -1).map((r) => r.entry_id),
    ])
    // The live query only ever grew (no emission undid a pending append).
    expect(seen).toStrictEqual([...seen].sort((x, y) => x - y))
    expect(seen.at(-1)).toBe(60)
    const c = await silentOn(store.storage.name.replace(/^indexeddb:/, ''))
    expect((await c.messages({ session_id, limit: 500 })).messages.map((m) => m.entry_id)).toStrictEqual(
      results.map((r) => r.entry_id),
    )
  })

  it('two stores streaming into one session at once both succeed: every entry once, one chain or siblings', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const { session_id } = await a.create({})
    await b.get({ session_id })
    const writes: Array<Promise<{ entry_id: string }>> = []
    for (let i = 0; i < 30; i++) {
      writes.push(a.append({ session_id, message: user(`a${i}`) }))
      writes.push(b.append({ session_id, message: user(`b${i}`) }))
      await macrotask()
    }
    const ids = (await Promise.all(writes)).map((r) => r.entry_id)
    const c = await silentOn(name)
    const tree = await new Promise<{ entries: ReadonlyMap<string, unknown> }>((resolve) => {
      const sub = c
        .tree$(session_id)
        .subscribe((t) => t && (resolve(t), queueMicrotask(() => sub.unsubscribe())))
    })
    expect(new Set(tree.entries.keys())).toStrictEqual(new Set(ids))
    expect((await c.get({ session_id }))?.meta.message_count).toBe(60)
  })
})
