import { firstValueFrom } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage } from '../src/index.js'
import { engineOf } from '../src/store.js'
import { idbStores, user } from './idb-stores.js'

// An app's first screen over real IndexedDB (Chromium): the newest sessions, then one chat of
// them. The heads the list page read are the ones the chat needs: opening the chat reads its
// entries only, in one transaction.

const { dbName, storeOn } = idbStores('first-chat')

/** Counts the transactions opened and the requests made on `sessions` and `entries` while `run` runs. */
async function counted<T>(
  run: () => Promise<T>,
): Promise<{ value: T; tx: number; heads: number; entries: number }> {
  const transaction = IDBDatabase.prototype.transaction
  const get = IDBObjectStore.prototype.get
  let tx = 0
  let heads = 0
  let entries = 0
  IDBDatabase.prototype.transaction = function (
    this: IDBDatabase,
    ...a: Parameters<IDBDatabase['transaction']>
  ) {
    tx++
    return transaction.apply(this, a)
  } as IDBDatabase['transaction']
  IDBObjectStore.prototype.get = function (this: IDBObjectStore, q: IDBValidKey | IDBKeyRange) {
    if (this.name === 'sessions') heads++
    if (this.name === 'entries') entries++
    return get.call(this, q)
  }
  try {
    const value = await run()
    return { value, tx, heads, entries }
  } finally {
    IDBDatabase.prototype.transaction = transaction
    IDBObjectStore.prototype.get = get
  }
}

async function seeded(chats: number, messages: number): Promise<{ name: string; ids: string[] }> {
  const name = dbName()
  let t = 1_000
  const seed = await createStore({ storage: indexedDbStorage({ name }), multiTab: false, now: () => ++t })
  const ids: string[] = []
  for (let i = 0; i < chats; i++) ids.push((await seed.create({ title: `c${i}` })).session_id)
  const chat = ids.at(-1)!
  for (let i = 0; i < messages; i++) await seed.append({ session_id: chat, message: user(`m${i}`) })
  await seed.close()
  return { name, ids }
}

describe('the first chat after the first page (Chromium IndexedDB)', () => {
  it('reads the chat in one transaction and no head: the list page seeded the working set', async () => {
    const { name, ids } = await seeded(60, 30)
    const s = await storeOn(name)
    const first = await firstValueFrom(s.sessions$({ limit: 50 }))
    expect(first[0]!.session_id).toBe(ids.at(-1))
    const engine = engineOf(s)
    // Bounded by the working set's bound, never past it.
    expect(engine.state.sessions.size).toBe(50)
    const { value, tx, heads } = await counted(() => s.messages({ session_id: ids.at(-1)!, limit: 50 }))
    expect(value.messages.map((m) => m.message?.content[0])).toStrictEqual(
      Array.from({ length: 30 }, (_, i) => ({ type: 'text', text: `m${i}` })),
    )
    expect(heads).toBe(0)
    expect(tx).toBe(1)
  })

  it('seeds no more heads than the working set keeps', async () => {
    const { name } = await seeded(60, 0)
    const s = await createStore({ storage: indexedDbStorage({ name }), maxHeads: 20 })
    try {
      await firstValueFrom(s.sessions$({ limit: 50 }))
      expect(engineOf(s).state.sessions.size).toBe(20)
    } finally {
      await s.close()
    }
  })
})
