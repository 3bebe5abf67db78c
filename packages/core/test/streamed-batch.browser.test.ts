import { afterEach, describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage, type Store } from '../src/index.js'
import { idbStores, onDisk, texts, user } from './idb-stores.js'

// A burst of appends checked from memory (the writer lock held, heads verified) hands its
// entries to IndexedDB while the batch is still being built: one transaction, each entry put
// once, the newest of each session put last with its stamp. Whatever fails, every call of the
// tick shares the outcome of that one transaction and memory stays equal to disk.

const { dbName, storeOn } = idbStores('streamed-batch')

const realPut = IDBObjectStore.prototype.put
afterEach(() => {
  IDBObjectStore.prototype.put = realPut
})
/** Calls `spy` before every put while installed (restored after each test). */
const onPut = (spy: (store: IDBObjectStore, value: unknown) => void): void => {
  IDBObjectStore.prototype.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
    spy(this, value)
    return realPut.call(this, value, key)
  }
}
const textOf = (value: unknown): string | undefined =>
  (value as { message?: { content?: Array<{ text?: string }> } }).message?.content?.[0]?.text
/** A store holding the writer lock and trusting `session_id` (its first append was checked). */
const trusted = async (
  name: string,
  now?: () => number,
): Promise<{ s: Store; session_id: string; leaf: string }> => {
  const s = now ? await createStore({ storage: indexedDbStorage({ name }), now }) : await storeOn(name)
  const { session_id } = await s.create({})
  const { entry_id: leaf } = await s.append({ session_id, message: user('first') })
  return { s, session_id, leaf }
}

describe('a burst of appends streamed into its transaction', () => {
  it('puts entries while the batch is built, each once, in one transaction; the disk agrees', async () => {
    const name = dbName()
    const log: string[] = []
    const { s, session_id } = await trusted(name, () => (log.push('now'), Date.now()))
    try {
      const puts: string[] = []
      onPut((store, value) => {
        if (store.name !== 'entries') return
        log.push('put')
        puts.push(textOf(value)!)
      })
      log.length = 0
      const tx0 = s.engine.transactions
      const burst = Array.from({ length: 100 }, (_, i) => `b${i}`)
      const got = await Promise.all(burst.map((t) => s.append({ session_id, message: user(t) })))
      expect(s.engine.transactions - tx0).toBe(1)
      expect(s.engine.reruns).toBe(0)
      // Each operation reads the clock once: puts went out before the last of them ran, in a
      // run of 64 back to back (cheaper for the page than a put between two operations).
      expect(log.filter((x) => x === 'now')).toHaveLength(100)
      expect(log.indexOf('put')).toBeLessThan(log.lastIndexOf('now'))
      const first = log.indexOf('put')
      expect(log.slice(first, first + 65)).toStrictEqual([...Array<string>(64).fill('put'), 'now'])
      // Every entry put exactly once, in order, the newest last (with the stamp).
      expect(puts).toStrictEqual(burst)
      for (let i = 1; i < got.length; i++) expect(got[i].parent_id).toBe(got[i - 1].entry_id)
      expect(await texts(s, session_id)).toStrictEqual(['first', ...burst])
      expect(await onDisk(name, session_id)).toStrictEqual({
        texts: ['first', ...burst],
        count: 101,
        leaf: got.at(-1)!.entry_id,
      })
    } finally {
      await s.close()
    }
  })

  it('bursts into two sessions at once: each session newest entry carries its state, a fresh store continues both chains', async () => {
    const name = dbName()
    const { s, session_id: one } = await trusted(name)
    const { session_id: two } = await s.create({})
    await s.append({ session_id: two, message: user('first') })
    let puts = 0
    onPut((store) => void (store.name === 'entries' && puts++))
    const calls = Array.from({ length: 80 }, (_, i) =>
      s.append({ session_id: i % 2 ? two : one, message: user(`${i % 2 ? 'two' : 'one'}${i >> 1}`) }),
    )
    const got = await Promise.all(calls)
    expect(puts).toBe(80)
    const expected = (p: string) => ['first', ...Array.from({ length: 40 }, (_, i) => `${p}${i}`)]
    expect(await onDisk(name, one)).toStrictEqual({
      texts: expected('one'),
      count: 41,
      leaf: got[78].entry_id,
    })
    expect(await onDisk(name, two)).toStrictEqual({
      texts: expected('two'),
      count: 41,
      leaf: got[79].entry_id,
    })
    IDBObjectStore.prototype.put = realPut
    // A store that knows only the disk appends on both chains' newest entries.
    const c = await storeOn(name)
    expect((await c.append({ session_id: one, message: user('next') })).parent_id).toBe(got[78].entry_id)
    expect((await c.append({ session_id: two, message: user('next') })).parent_id).toBe(got[79].entry_id)
  })

  it('an append refused in the middle of a burst fails alone; the chain skips it', async () => {
    const name = dbName()
    const { s, session_id } = await trusted(name)
    const calls = Array.from({ length: 60 }, (_, i) =>
      s.append(
        i === 30
          ? { session_id, message: user('orphan'), parent_id: 'e_missing' }
          : { session_id, message: user(`b${i}`) },
      ),
    )
    const settled = await Promise.allSettled(calls)
    expect(settled[30]).toMatchObject({ status: 'rejected', reason: { code: 'session/parent_not_found' } })
    const ok = settled
      .filter((r) => r.status === 'fulfilled')
      .map((r) => (r as PromiseFulfilledResult<{ entry_id: string; parent_id: string }>).value)
    expect(ok).toHaveLength(59)
    expect(ok[30].parent_id).toBe(ok[29].entry_id)
    const burst = Array.from({ length: 60 }, (_, i) => `b${i}`).filter((t) => t !== 'b30')
    expect(await onDisk(name, session_id)).toStrictEqual({
      texts: ['first', ...burst],
      count: 60,
      leaf: ok.at(-1)!.entry_id,
    })
  })

  it('a transaction ended mid-stream: the batch runs again the usual way and lands whole', async () => {
    const name = dbName()
    const { s, session_id } = await trusted(name)
    let aborted = false
    let n = 0
    onPut((store) => {
      // The 50th entry of the first attempt: the transaction ends under the stream.
      if (store.name === 'entries' && ++n === 50 && !aborted) {
        aborted = true
        store.transaction.abort()
      }
    })
    const burst = Array.from({ length: 100 }, (_, i) => `b${i}`)
    const got = await Promise.all(burst.map((t) => s.append({ session_id, message: user(t) })))
    expect(aborted).toBe(true)
    expect(s.engine.reruns).toBe(1)
    expect(await texts(s, session_id)).toStrictEqual(['first', ...burst])
    expect(await onDisk(name, session_id)).toStrictEqual({
      texts: ['first', ...burst],
      count: 101,
      leaf: got.at(-1)!.entry_id,
    })
  })

  it('a transaction failing mid-burst rejects every call of the tick: memory equals disk, no event, the next append follows the disk', async () => {
    const name = dbName()
    const { s, session_id, leaf } = await trusted(name)
    const before = await s.get({ session_id })
    const events: string[] = []
    const sub = s.on('session::message-added').subscribe((p) => events.push(p.entry_id))
    const count = new WeakMap<IDBTransaction, number>()
    // Every attempt's transaction is aborted at its 50th entry (as a failing disk would).
    onPut((store) => {
      if (store.name !== 'entries') return
      const k = (count.get(store.transaction) ?? 0) + 1
      count.set(store.transaction, k)
      if (k === 50) store.transaction.abort()
    })
    const settled = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => s.append({ session_id, message: user(`b${i}`) })),
    )
    IDBObjectStore.prototype.put = realPut
    sub.unsubscribe()
    expect(
      settled.every(
        (r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'session/storage',
      ),
    ).toBe(true)
    expect(events).toStrictEqual([])
    expect(await s.get({ session_id })).toStrictEqual(before)
    expect(await texts(s, session_id)).toStrictEqual(['first'])
    expect(await onDisk(name, session_id)).toStrictEqual({ texts: ['first'], count: 1, leaf })
    const next = await s.append({ session_id, message: user('after') })
    expect(next.parent_id).toBe(leaf)
    expect(await onDisk(name, session_id)).toStrictEqual({
      texts: ['first', 'after'],
      count: 2,
      leaf: next.entry_id,
    })
  })
})
