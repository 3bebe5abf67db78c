import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type SessionEntry, type Storage } from '../src/index.js'

// A storage may read a session in parts (IndexedDB reads a large one from both ends): the engine
// gives it the head's message count as a hint and a callback for the first part, indexes that part
// as soon as it lands (while the rest is read), and completes it with the rest. What the store
// then holds is the session exactly as stored, whichever part an entry came in.

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

describe('a session loaded in parts', () => {
  it('is indexed from its first part as it lands, then whole: the same transcript and tree as one read gives', async () => {
    const base = memoryStorage()
    let clock = 1_000
    const writer = await createStore({ storage: base, multiTab: false, prefetch: false, now: () => ++clock })
    const { session_id } = await writer.create({ title: 'T' })
    const ids: string[] = []
    for (let i = 0; i < 6; i++)
      ids.push((await writer.append({ session_id, message: user(`m${i}`) })).entry_id)
    // Two more children of the second message: siblings, in creation order.
    const b1 = await writer.append({ session_id, parent_id: ids[1], message: user('b1') })
    const b2 = await writer.append({ session_id, parent_id: ids[1], message: user('b2') })
    await writer.setActiveLeaf({ session_id, entry_id: ids[5] })
    const stored = await base.entries(session_id)

    const asked: Array<{ count?: number; first: boolean }> = []
    let firstPart: readonly SessionEntry[] = []
    const storage: Storage = {
      ...base,
      open: () => base.open(),
      async entries(id, count, first) {
        asked.push({ count, first: typeof first === 'function' })
        const all = await base.entries(id)
        // The first part handed over as copies, and resolved as other copies of the same entries:
        // the objects the store ends up holding tell whether it indexed the part as it landed.
        firstPart = all.slice(0, 3).map((e) => structuredClone(e))
        first?.(firstPart)
        return [...all.slice(0, 3).map((e) => structuredClone(e)), ...all.slice(3)]
      },
    }
    const reader = await createStore({ storage, multiTab: false, prefetch: false })
    const items = await new Promise<Array<{ entry_id: string }>>((resolve, reject) => {
      const sub = reader
        .messages$({ session_id })
        .subscribe({ next: (v) => (resolve(v), queueMicrotask(() => sub.unsubscribe())), error: reject })
    })
    expect(asked).toStrictEqual([{ count: 8, first: true }])
    expect(items.map((i) => i.entry_id)).toStrictEqual(ids)

    const tree = await new Promise<{
      entries: ReadonlyMap<string, SessionEntry>
      children: ReadonlyMap<string | null, readonly string[]>
    }>((resolve) => {
      const sub = reader
        .tree$(session_id)
        .subscribe((t) => t && (resolve(t), queueMicrotask(() => sub.unsubscribe())))
    })
    expect([...tree.entries.keys()]).toStrictEqual(stored.map((e) => e.id))
    expect(tree.children.get(ids[1])).toStrictEqual([ids[2], b1.entry_id, b2.entry_id])
    // The first part's entries are the ones indexed when it landed.
    for (const e of firstPart) expect(tree.entries.get(e.id)).toBe(e)
    // Appending goes on from what was loaded.
    const next = await reader.append({ session_id, message: user('after') })
    expect(next.parent_id).toBe(ids[5])
    await reader.close()
    await writer.close()
  })
})
