import { afterEach, describe, expect, it } from 'vitest'
import { idbStores, onDisk, texts, user } from './idb-stores.js'

// `IDBTransaction.commit()` called right after the last request, in Chromium: only for a commit
// nothing can need to abort afterwards (a holder of the writer lock, every check trusted and
// final, no other transaction of the storage in flight). Everything else waits for auto-commit.

const { dbName, storeOn } = idbStores('early-commit')

/** Counts `IDBTransaction.prototype.commit` calls while installed. */
const commits = { n: 0 }
const realCommit = IDBTransaction.prototype.commit
IDBTransaction.prototype.commit = function (this: IDBTransaction) {
  commits.n++
  return realCommit.call(this)
}
afterEach(() => {
  commits.n = 0
})
const counting = async (fn: () => Promise<void>): Promise<number> => {
  const before = commits.n
  await fn()
  return commits.n - before
}

describe('early IDBTransaction.commit()', () => {
  it('a trusted append awaited on its own calls commit() once, and lands', async () => {
    const name = dbName()
    const a = await storeOn(name)
    // The create checks its new id absent on disk (a read): no early commit.
    let session_id = ''
    expect(await counting(async () => void ({ session_id } = await a.create({})))).toBe(0)
    // Trusted from here on, its first append already: each awaited append is one put and a commit().
    expect(await counting(async () => void (await a.append({ session_id, message: user('checked') })))).toBe(
      1,
    )
    let leaf = ''
    expect(
      await counting(async () => {
        for (let i = 0; i < 5; i++) leaf = (await a.append({ session_id, message: user(`t${i}`) })).entry_id
      }),
    ).toBe(5)
    expect(await onDisk(name, session_id)).toStrictEqual({
      texts: ['checked', 't0', 't1', 't2', 't3', 't4'],
      count: 6,
      leaf,
    })
  })

  it('checked commits and pipelined ones whose checks are pending wait for auto-commit', async () => {
    const name = dbName()
    const a = await storeOn(name)
    // Create checks the disk (the store holds no trust yet); the first append is trusted.
    const { session_id } = await a.create({})
    expect(await counting(async () => void (await a.append({ session_id, message: user('checked') })))).toBe(
      1,
    )
    // Appends fired without awaiting: each batch after the first is built on the draft of the
    // one still committing, so its check is pending until that one completes.
    const started = a.engine.transactions
    const n = await counting(async () => {
      const writes = Array.from({ length: 20 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, 0))
        return a.append({ session_id, message: user(`p${i}`) })
      })
      await Promise.all(writes)
    })
    const batches = a.engine.transactions - started
    expect(a.engine.reruns).toBe(0)
    // Only batches issued while no other was in flight may commit early: the pipelined ones did not.
    expect(batches).toBeGreaterThan(2)
    expect(n).toBeLessThan(batches)
    expect(await onDisk(name, session_id)).toMatchObject({ count: 21 })
  })

  it('a request failing after an early commit() still rejects with session/storage: memory equals disk, no event', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const { session_id } = await a.create({})
    await a.append({ session_id, message: user('kept') })
    const { entry_id: leaf } = await a.append({ session_id, message: user('trusted') })
    const before = await a.get({ session_id })
    const events: string[] = []
    const sub = a.on('session::message-added').subscribe((p) => events.push(p.entry_id))
    const put = IDBObjectStore.prototype.put
    let called = 0
    // The doomed entry's put goes through, then a second write of its key fails in the engine
    // (ConstraintError, as a quota error would): the transaction aborts after commit() was called.
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      const r = put.call(this, value, key)
      if (!JSON.stringify(value).includes('doomed')) return r
      called = commits.n
      return this.add(value, key)
    }
    let failure: unknown
    let early: number
    try {
      early = await counting(async () => {
        failure = await a.append({ session_id, message: user('doomed') }).then(
          () => undefined,
          (e: unknown) => e,
        )
      })
    } finally {
      IDBObjectStore.prototype.put = put
      sub.unsubscribe()
    }
    // commit() was called after the failing request was issued.
    expect(early).toBe(1)
    expect(commits.n).toBeGreaterThan(called)
    expect(failure).toMatchObject({ code: 'session/storage' })
    expect(events).toStrictEqual([])
    expect(await a.get({ session_id })).toStrictEqual(before)
    expect(await texts(a, session_id)).toStrictEqual(['kept', 'trusted'])
    expect(await onDisk(name, session_id)).toStrictEqual({ texts: ['kept', 'trusted'], count: 2, leaf })
    // The store goes on on the chain the disk holds.
    const next = await a.append({ session_id, message: user('after') })
    expect(next.parent_id).toBe(leaf)
    expect(await onDisk(name, session_id)).toStrictEqual({
      texts: ['kept', 'trusted', 'after'],
      count: 3,
      leaf: next.entry_id,
    })
  })
})
