import 'fake-indexeddb/auto'
import { describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage } from '../src/index.js'

let n = 0
const dbName = (): string => `idb-storage-${Date.now()}-${++n}`
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

describe('indexedDbStorage over fake-indexeddb', () => {
  it('keeps sessions, entries, revisions and the leaf across a reopen', async () => {
    const name = dbName()
    const a = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
    const { session_id } = await a.create({ title: 'T', metadata: { owner: 'u_1' } })
    const first = await a.append({ session_id, message: user('one') })
    await a.append({ session_id, message: user('two') })
    await a.updateMessage({ session_id, entry_id: first.entry_id, content: [{ type: 'text', text: 'uno' }] })
    await a.setActiveLeaf({ session_id, entry_id: first.entry_id })
    await a.close()

    const b = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
    const meta = (await b.get({ session_id }))!.meta
    expect(meta).toMatchObject({ title: 'T', message_count: 2, metadata: { owner: 'u_1' } })
    const page = await b.messages({ session_id })
    expect(page.messages.map((m) => m.entry_id)).toEqual([first.entry_id])
    expect((await b.getMessage({ session_id, entry_id: first.entry_id }))!.entry.revision).toBe(1)
    await b.close()
  })

  it('groups everything issued in one tick into one transaction', async () => {
    const store = await createStore({ storage: indexedDbStorage({ name: dbName() }), multiTab: false })
    const { session_id } = await store.create({})
    const before = store.engine.transactions
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.append({ session_id, message: user(`m${i}`) })),
    )
    expect(store.engine.transactions - before).toBe(1)
    // Issued together without parents, they form one chain in issue order.
    for (let i = 1; i < results.length; i++) expect(results[i].parent_id).toBe(results[i - 1].entry_id)
    await store.close()
  })

  it('two stores on one database append concurrently into one chain, and relay to each other', async () => {
    const name = dbName()
    const a = await createStore({ storage: indexedDbStorage({ name }) })
    const b = await createStore({ storage: indexedDbStorage({ name }) })
    const { session_id } = await a.create({})
    // b never saw the create: its commit finds the session on disk inside the transaction.
    const first = await b.append({ session_id, message: user('from b first') })
    const [x, y] = await Promise.all([
      a.append({ session_id, message: user('from a') }),
      b.append({ session_id, message: user('from b') }),
    ])
    // Whichever committed second chained onto the other: no sibling, nothing lost.
    const chain =
      x.parent_id === y.entry_id
        ? [first.entry_id, y.entry_id, x.entry_id]
        : [first.entry_id, x.entry_id, y.entry_id]
    expect([x.parent_id, y.parent_id].sort()).toEqual([first.entry_id, chain[1]].sort())
    // Each store shows the whole chain once the other's commit has reached it.
    for (const s of [a, b])
      await expect
        .poll(async () => (await s.messages({ session_id })).messages.map((m) => m.entry_id))
        .toEqual(chain)
    await a.close()
    await b.close()
  })
})
