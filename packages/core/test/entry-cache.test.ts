import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Storage } from '../src/index.js'

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})
const loaded = (store: { engine: { state: { sessions: Map<string, { entries?: unknown }> } } }): number =>
  [...store.engine.state.sessions.values()].filter((s) => s.entries).length

describe('entry cache with a byte budget', () => {
  it("drops idle sessions' entries past the budget, keeps heads, and reads them back on access unchanged", async () => {
    const storage = memoryStorage()
    const reads: string[] = []
    const counting: Storage = {
      ...storage,
      name: storage.name,
      entries: (id) => (reads.push(id), storage.entries(id)),
      open: () => storage.open(),
      transact: (w) => storage.transact(w),
      close: () => storage.close(),
    }
    const store = await createStore({
      storage: counting,
      multiTab: false,
      cache: { maxBytes: 20_000, idleMs: 0 },
    })
    const ids: string[] = []
    for (let i = 0; i < 20; i++) {
      const { session_id } = await store.create({ title: `s${i}` })
      ids.push(session_id)
      for (let j = 0; j < 5; j++)
        await store.append({ session_id, message: user(`${i}:${j} ${'x'.repeat(300)}`) })
    }
    // 20 sessions of ~5 KB of entries each, against a 20 KB budget.
    expect(store.engine.cache!.bytes).toBeLessThanOrEqual(20_000)
    expect(loaded(store)).toBeLessThan(20)
    expect(loaded(store)).toBeGreaterThan(0)
    expect(store.engine.state.sessions.size).toBe(20)
    expect((await store.list({ limit: 100 })).sessions).toHaveLength(20)
    // The first session was evicted; reading it loads it again from storage, whole.
    expect(store.engine.state.sessions.get(ids[0])!.entries).toBeUndefined()
    const { messages } = await store.messages({ session_id: ids[0] })
    expect(
      messages.map((m) => (m.message as { content: Array<{ text: string }> }).content[0].text.slice(0, 3)),
    ).toEqual(['0:0', '0:1', '0:2', '0:3', '0:4'])
    expect(reads).toContain(ids[0])
    // Appending to an evicted session works and keeps its history.
    await store.append({ session_id: ids[1], message: user('later') })
    expect((await store.messages({ session_id: ids[1] })).messages).toHaveLength(6)
    expect(store.engine.cache!.bytes).toBeLessThanOrEqual(20_000 + 6_000)
    await store.close()
  })

  it('never drops a session used within idleMs, and without a budget nothing is dropped', async () => {
    const busy = await createStore({
      storage: memoryStorage(),
      multiTab: false,
      cache: { maxBytes: 1, idleMs: 60_000 },
    })
    const { session_id } = await busy.create({ title: 'busy' })
    await busy.append({ session_id, message: user('hello') })
    expect(busy.engine.state.sessions.get(session_id)!.entries?.size).toBe(1)
    await busy.close()
    const plain = await createStore({ storage: memoryStorage(), multiTab: false })
    for (let i = 0; i < 5; i++) {
      const s = await plain.create({ title: `p${i}` })
      await plain.append({ session_id: s.session_id, message: user('x'.repeat(10_000)) })
    }
    expect(loaded(plain)).toBe(5)
    expect(plain.engine.cache).toBeUndefined()
    await plain.close()
  })
})
