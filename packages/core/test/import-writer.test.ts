import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type SessionHead, type Storage, type Store } from '../src/index.js'
import { chain, importSuite, metaOf } from './import-suite.js'
import { liveHeap } from '../../../test/support/heap.js'

importSuite('memory storage', {
  open: () => createStore({ storage: memoryStorage(), multiTab: false }),
  reopen: (store) => createStore({ storage: store.storage, multiTab: false }),
})

/** A storage that keeps heads and only counts entries: what the import holds is all that stays in the heap. */
function countingStorage(): Storage & { written: number } {
  const heads = new Map<string, SessionHead>()
  const s = {
    name: 'counting',
    written: 0,
    async open() {
      return [...heads.values()]
    },
    async entries() {
      return []
    },
    async transact(work: Parameters<Storage['transact']>[0]) {
      const w = await work({ head: async (id) => heads.get(id), entries: async () => [] })
      for (const id of w.deleted) heads.delete(id)
      for (const [id, h] of w.heads) heads.set(id, h)
      for (const batch of w.entries.values()) s.written += batch.size
    },
    close() {},
  }
  return s
}

describe('incremental import memory', () => {
  it('a 120 MB import appended chunk by chunk keeps the heap flat: neither the entries nor their checked copies stay', async () => {
    const storage = countingStorage()
    const store: Store = await createStore({ storage, multiTab: false })
    const text = 'x'.repeat(2_000)
    const total = 60_000
    const chunk = 1_000
    const base = liveHeap()
    let peak = 0
    const w = await store.beginImport('big', { chunkSize: chunk })
    // Chunks are made on demand, as a streaming parser makes them; two in flight at most.
    let previous: Promise<void> = Promise.resolve()
    for (let i = 0; i < total; i += chunk) {
      const next = w.append(chain(i, i + chunk, (k) => `${k} ${text}`))
      next.catch(() => {})
      await previous
      previous = next
      if ((i / chunk) % 10 === 9) {
        peak = Math.max(peak, liveHeap() - base)
      }
    }
    await previous
    await w.commit({ meta: metaOf('big'), active_leaf: `e${total - 1}` })
    expect(storage.written).toBe(total)
    expect((await store.get({ session_id: 'big' }))?.meta.message_count).toBe(total)
    // 60,000 entries of 2 kB are 120 MB of text; the import keeps ids and parent ids (a few MB).
    expect(peak).toBeLessThan(24 * 2 ** 20)
  }, 120_000)
})
