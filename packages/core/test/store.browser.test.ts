import { describe, expect, it, vi } from 'vitest'
import { firstValueFrom, filter } from 'rxjs'
import { SessionError, type MessageItem } from '../src/index.js'
import { idbStores, user } from './idb-stores.js'

const { dbName, storeOn } = idbStores('core-browser')
const frame = (): Promise<void> => new Promise((r) => requestAnimationFrame(() => r()))

describe('core over real IndexedDB in Chromium', () => {
  it('two tabs append concurrently: one chain, nothing lost or duplicated, each sees the other live', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const { session_id } = await a.create({ title: 'shared' })
    await frame()
    const seenByB: MessageItem[][] = []
    b.messages$({ session_id }).subscribe((v) => seenByB.push(v))
    const writes: Promise<{ entry_id: string }>[] = []
    for (let i = 0; i < 40; i++) {
      writes.push(a.append({ session_id, message: user(`a${i}`) }))
      writes.push(b.append({ session_id, message: user(`b${i}`) }))
      if (i % 10 === 0) await frame()
    }
    const ids = (await Promise.all(writes)).map((r) => r.entry_id)
    // Each tab learns of the other's last commits through the relay, a task or two later (how
    // soon is a latency, measured by the benchmarks, not asserted here).
    const path = async (s: typeof a): Promise<string[]> =>
      (await s.messages({ session_id, limit: 500 })).messages.map((m) => m.entry_id)
    await vi.waitFor(async () => expect(await path(a)).toHaveLength(80))
    await vi.waitFor(async () => expect(await path(b)).toHaveLength(80))
    const fromA = await path(a)
    const fromB = await path(b)
    // Appends without a parent always chain: the whole session is one path holding every entry once.
    expect(new Set(fromA)).toEqual(new Set(ids))
    expect(fromA).toHaveLength(80)
    expect(fromB).toEqual(fromA)
    expect((await a.get({ session_id }))!.meta.message_count).toBe(80)
    await vi.waitFor(() => expect(seenByB.at(-1)!.map((m) => m.entry_id)).toEqual(fromA))

    // One more write from a reaches b's live query.
    const { entry_id } = await a.append({ session_id, message: user('late') })
    await vi.waitFor(() => expect(seenByB.at(-1)!.at(-1)!.entry_id).toBe(entry_id))
  })

  it("relays every tab's events to the other tab", async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const created = firstValueFrom(b.on('session::created', { metadata: { owner: 'u_9' } }))
    const { session_id } = await a.create({ title: 'from a', metadata: { owner: 'u_9' } })
    expect(await created).toMatchObject({ session_id, title: 'from a' })
    const updated = firstValueFrom(b.on('session::message-updated', { session_id }))
    const { entry_id } = await a.append({ session_id, message: user('x') })
    await a.updateMessage({
      session_id,
      entry_id,
      content: [{ type: 'text', text: 'y' }],
      origin: { turn_id: 't1' },
    })
    expect(await updated).toMatchObject({ entry_id, revision: 1, origin: { turn_id: 't1' } })
  })

  it('everything survives closing and reopening the database (a reload)', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const { session_id } = await a.create({ title: 'persisted' })
    const one = await a.append({ session_id, message: user('one') })
    await a.append({ session_id, message: user('two') })
    await a.append({ session_id, message: user('branch'), parent_id: one.entry_id })
    await a.close()
    const b = await storeOn(name)
    expect((await b.get({ session_id }))!.meta).toMatchObject({ title: 'persisted', message_count: 3 })
    const tree = await firstValueFrom(b.tree$(session_id).pipe(filter((t) => t !== null)))
    expect(tree!.children.get(one.entry_id)).toHaveLength(2)
    expect((await b.messages({ session_id })).messages.map((m) => m.message!.content[0])).toEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'branch' },
    ])
  })

  it('a failing write (quota exceeded) rejects with session/storage, fires nothing and leaves memory equal to disk', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('kept') })
    const events: unknown[] = []
    a.on('session::message-added').subscribe((e) => events.push(e))
    const put = IDBObjectStore.prototype.put
    IDBObjectStore.prototype.put = function () {
      IDBObjectStore.prototype.put = put
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError')
    }
    const error = await a.append({ session_id, message: user('lost') }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionError)
    expect((error as SessionError).code).toBe('session/storage')
    expect((error as SessionError).message).toContain('QuotaExceededError')
    expect(events).toHaveLength(0)
    const inMemory = await a.messages({ session_id })
    expect((await a.get({ session_id }))!.meta.message_count).toBe(1)
    await a.close()
    const b = await storeOn(name)
    expect((await b.messages({ session_id })).messages).toEqual(inMemory.messages)
    // The store goes on working after the failure.
    await b.append({ session_id, message: user('after') })
    expect((await b.get({ session_id }))!.meta.message_count).toBe(2)
  })

  it('a connection the browser closed is reopened once before giving up', async () => {
    const a = await storeOn(dbName())
    const { session_id } = await a.create({})
    const transaction = IDBDatabase.prototype.transaction
    let failures = 0
    IDBDatabase.prototype.transaction = function (
      this: IDBDatabase,
      ...args: Parameters<IDBDatabase['transaction']>
    ) {
      if (args[1] === 'readwrite' && failures++ === 0) {
        this.close()
        throw new DOMException('The database connection is closing.', 'InvalidStateError')
      }
      return transaction.apply(this, args)
    } as IDBDatabase['transaction']
    try {
      await a.append({ session_id, message: user('after reconnect') })
    } finally {
      IDBDatabase.prototype.transaction = transaction
    }
    expect(failures).toBeGreaterThan(1)
    expect((await a.messages({ session_id })).messages).toHaveLength(1)
  })

  it('a schema upgrade from another tab is not blocked: this connection closes cleanly', async () => {
    const name = dbName()
    const a = await storeOn(name)
    await a.create({})
    let blocked = false
    const upgraded = await new Promise<IDBDatabase>((resolve, reject) => {
      // The store's schema is version 6 (order records holding the head's volatile part): another tab opens a newer one.
      const req = indexedDB.open(name, 7)
      req.onblocked = () => (blocked = true)
      req.onsuccess = () => resolve(req.result)
      req.onerror = () => reject(req.error)
    })
    expect(blocked).toBe(false)
    upgraded.close()
    // The old build cannot open the newer schema: its writes fail cleanly with session/storage.
    const error = await a.create({}).catch((e: unknown) => e)
    expect((error as SessionError).code).toBe('session/storage')
  })
})
