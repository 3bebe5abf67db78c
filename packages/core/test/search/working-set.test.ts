import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage } from '../../src/index.js'
import { hostOf } from '../../src/host.js'
import { enableSearch } from '../../src/search/index.js'

// A store that holds only a working set of heads (as over IndexedDB): search still covers every
// session, those the store never loaded or already let go included.
const user = (text: string, timestamp = 1) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp,
})

describe('search over a store holding a working set of heads', () => {
  it('indexes, finds and filters sessions that are not in memory', async () => {
    const disk = memoryStorage({ paged: true })
    const writer = await createStore({ storage: disk, multiTab: false })
    const ids: string[] = []
    for (let i = 0; i < 12; i++) {
      const { session_id } = await writer.create({ title: `chat number${i}` })
      await writer.append({ session_id, message: user(`plain text ${i}`) })
      ids.push(session_id)
    }
    // A session with two branches; the active one is the second.
    const branched = ids[0]!
    const root = await writer.append({ session_id: branched, message: user('question') })
    await writer.append({ session_id: branched, parent_id: root.entry_id, message: user('kiwi offbranch') })
    await writer.append({ session_id: branched, parent_id: root.entry_id, message: user('mango onbranch') })
    await writer.close()

    const store = await createStore({ storage: disk, multiTab: false, maxHeads: 2 })
    const host = hostOf(store)
    expect(host.allHeld).toBe(false)
    const search = await enableSearch(store, { settleMs: 0 })
    await search.flush()
    // Every session is indexed; the store's own memory stays bounded meanwhile.
    expect([...host.heads()].length).toBeLessThanOrEqual(2)
    const found = await search.query({ query: 'plain', limit: 100 })
    expect(new Set(found.hits.map((h) => h.session_id))).toStrictEqual(new Set(ids))
    const title = await search.query({ query: 'number7' })
    expect(title.hits.map((h) => [h.session_id, h.entry_id])).toStrictEqual([[ids[7], null]])
    // The active path is known for a session whose head is not in memory.
    for (let i = 1; i < 12; i++) await store.get({ session_id: ids[i]! })
    expect([...host.heads()].some((h) => h.meta.session_id === branched)).toBe(false)
    expect((await search.query({ query: 'kiwi', active_path_only: true })).hits).toStrictEqual([])
    const on = await search.query({ query: 'mango', active_path_only: true })
    expect(on.hits.map((h) => [h.session_id, h.on_active_path])).toStrictEqual([[branched, true]])
    const off = await search.query({ query: 'kiwi' })
    expect(off.hits.map((h) => h.on_active_path)).toStrictEqual([false])
    await search.close()
    await store.close()
  })

  it('reads sessions ahead of their turn, and indexes them with a working set smaller than the reads ahead', async () => {
    const disk = memoryStorage({ paged: true })
    const writer = await createStore({ storage: disk, multiTab: false })
    const ids: string[] = []
    for (let i = 0; i < 30; i++) {
      const { session_id } = await writer.create({ title: `chat ${i}` })
      await writer.append({ session_id, message: user(`common tag${i}`) })
      ids.push(session_id)
    }
    await writer.close()
    // The storage's entry reads counted as they overlap (each takes a task, as a real storage's
    // round trip does, so reads issued together are seen together).
    let reading = 0
    let most = 0
    const counted = Object.assign(Object.create(disk) as typeof disk, {
      entries: async (...args: Parameters<typeof disk.entries>) => {
        most = Math.max(most, ++reading)
        try {
          await new Promise((resolve) => setTimeout(resolve, 0))
          return await disk.entries(...args)
        } finally {
          reading--
        }
      },
    })
    // Two heads held: the sessions read ahead are more than the working set keeps.
    const store = await createStore({ storage: counted, multiTab: false, maxHeads: 2 })
    const search = await enableSearch(store, { settleMs: 0 })
    await search.flush()
    expect(most).toBeGreaterThan(1)
    const found = await search.query({ query: 'common', limit: 100 })
    expect(new Set(found.hits.map((h) => h.session_id))).toStrictEqual(new Set(ids))
    for (const [i, sid] of ids.entries())
      expect(
        (await search.query({ query: `tag${i}`, prefix: false })).hits.map((h) => h.session_id),
      ).toStrictEqual([sid])
    search.close()
    await store.close()
  })

  it("indexes every session without keeping any in the store's working set", async () => {
    const disk = memoryStorage({ paged: true })
    const writer = await createStore({ storage: disk, multiTab: false })
    const ids: string[] = []
    for (let i = 0; i < 40; i++) {
      const { session_id } = await writer.create({ title: `chat ${i}` })
      await writer.append({ session_id, message: user(`lorem word${i}`) })
      await writer.append({ session_id, message: user(`ipsum more${i}`) })
      ids.push(session_id)
    }
    await writer.close()
    // Room for every session: a pass that loaded them would keep them all.
    const store = await createStore({ storage: disk, multiTab: false, maxHeads: 500 })
    const host = hostOf(store)
    const before = [...host.heads()].length
    const search = await enableSearch(store, { settleMs: 0 })
    await search.flush()
    expect([...host.heads()].length).toBe(before)
    expect(ids.filter((sid) => host.entries(sid) !== undefined)).toStrictEqual([])
    const found = await search.query({ query: 'ipsum', limit: 100 })
    expect(new Set(found.hits.map((h) => h.session_id))).toStrictEqual(new Set(ids))
    // Then a session the app opens and appends to is indexed from memory as before.
    await store.append({ session_id: ids[3]!, message: user('fresh kiwi') })
    await search.flush()
    expect((await search.query({ query: 'kiwi' })).hits.map((h) => h.session_id)).toStrictEqual([ids[3]])
    search.close()
    await store.close()
  })
})
