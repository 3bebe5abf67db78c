import { describe, expect, it } from 'vitest'
import { createStore, deleteIndexedDbStore, indexedDbStorage } from '../../src/index.js'
import { enableSearch } from '../../src/search/index.js'

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 1,
})
const databases = async (prefix: string): Promise<string[]> =>
  (await indexedDB.databases())
    .map((d) => d.name ?? '')
    .filter((n) => n.startsWith(prefix))
    .sort()

describe('deleting a store deletes its search index', () => {
  it('deletes <name>:search (and +thinking) with the store, while open in this tab and another', async () => {
    const name = `delete-store-${crypto.randomUUID()}`
    // Two tabs on one database, each with an index open: the deletion waits for no one.
    const a = await createStore({ storage: indexedDbStorage({ name }) })
    const b = await createStore({ storage: indexedDbStorage({ name }) })
    const search = await enableSearch(a)
    const withThinking = await enableSearch(b, { thinking: true })
    const { session_id } = await a.create({ title: 'private' })
    await a.append({ session_id, message: user('my walrus diary') })
    await a.flush()
    await search.flush()
    await withThinking.flush()
    expect((await search.query({ query: 'walrus' })).hits).toHaveLength(1)
    expect(await databases(name)).toEqual([name, `${name}:search`, `${name}:search+thinking`])

    await deleteIndexedDbStore(name)
    expect(await databases(name)).toEqual([])
    // The open index lets go and writes nothing more: its database is not made again.
    await a.append({ session_id, message: user('another walrus') }).catch(() => {})
    await search.flush()
    await withThinking.flush()
    expect(await databases(name)).toEqual([])
    search.close()
    withThinking.close()
    await Promise.all([a.close(), b.close()])

    // Opened again, the store starts clean, and so does its index: nothing of the deleted chats.
    const again = await createStore({ storage: indexedDbStorage({ name }) })
    const fresh = await enableSearch(again)
    expect((await fresh.query({ query: 'walrus' })).hits).toEqual([])
    expect(await databases(name)).toEqual([name, `${name}:search`])
    fresh.close()
    await again.close()
    await deleteIndexedDbStore(name)
  })

  it('deletes an index left beside a store no tab has open', async () => {
    const name = `delete-closed-${crypto.randomUUID()}`
    const store = await createStore({ storage: indexedDbStorage({ name }) })
    const search = await enableSearch(store)
    const { session_id } = await store.create({})
    await store.append({ session_id, message: user('narwhal') })
    await search.flush()
    search.close()
    await store.close()
    expect(await databases(name)).toEqual([name, `${name}:search`])
    await deleteIndexedDbStore(name)
    expect(await databases(name)).toEqual([])
  })
})
