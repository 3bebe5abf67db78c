import { describe, expect, it, vi } from 'vitest'
import { openDB } from 'idb'
import { createStore, indexedDbStorage } from '../../src/index.js'
import { hostOf } from '../../src/host.js'
import { enableSearch } from '../../src/search/index.js'
import { markOf } from '../../src/search/enable-search.js'
import { INDEX_VERSION } from '../../src/search/index-store.js'
import { BLOCK_DOCS } from '../../src/search/doc-block.js'

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 1,
})

/** The index database holds version 3 only: blocks of `eids` (in order), terms packed as given. */
async function expectOnlyBlocks(name: string, eids: string[][], terms: string, sizes: number[]) {
  const disk = await openDB(`${name}:search`)
  expect(disk.version).toBe(INDEX_VERSION)
  expect([...disk.objectStoreNames].sort()).toEqual(['blocks', 'sessions'])
  const blocks = await disk.getAll('blocks')
  expect(blocks.map((b: { eids: string[] }) => b.eids)).toEqual(eids)
  expect(blocks[0].terms).toBe(terms)
  expect([...blocks[0].sizes]).toEqual(sizes)
  disk.close()
}

describe('the index database across versions and opens', () => {
  it('drops a version 1 index (arrays of terms) and reads the store again', async () => {
    const name = `search-v1-${crypto.randomUUID()}`
    const store = await createStore({ storage: indexedDbStorage({ name }) })
    const { session_id } = await store.create({ title: 'kept chat' })
    const { entry_id } = await store.append({ session_id, message: user('walrus tusk') })
    await store.flush()
    const head = hostOf(store).head(session_id)!
    // A version 1 index as the previous release wrote it, with this session's current mark (so
    // kept as it is, nothing would read the session again) but words the store does not hold.
    const v1 = await openDB(`${name}:search`, 1, {
      upgrade(db) {
        db.createObjectStore('sessions', { keyPath: 'sid' })
        db.createObjectStore('docs', { keyPath: ['sid', 'eid'] })
      },
    })
    const meta = { role: 'user', ts: 1, parent: null, rev: 0, len: 1 }
    await v1.put('sessions', {
      sid: session_id,
      mark: markOf(head),
      title: { ...meta, sid: session_id, eid: null, role: 'title', rev: -1, terms: ['stale'], tfs: [1] },
    })
    await v1.put('docs', { ...meta, sid: session_id, eid: entry_id, terms: ['zebra'], tfs: [1] })
    await v1.put('docs', { ...meta, sid: session_id, eid: 'gone', terms: ['zebra'], tfs: [1] })
    v1.close()

    const search = await enableSearch(store)
    const found = async (query: string) =>
      (await search.query({ query, prefix: false })).hits.map((h) => h.entry_id)
    expect(await found('walrus')).toEqual([entry_id])
    expect(await found('kept')).toEqual([null])
    expect(await found('zebra')).toEqual([])
    expect(await found('stale')).toEqual([])
    await search.flush()
    await expectOnlyBlocks(name, [[entry_id]], 'tuskwalrus', [4, 1, 6, 1])
    search.close()
    await store.close()
  })

  it('drops a version 2 index (a record per document) and reads the store again', async () => {
    const name = `search-v2-${crypto.randomUUID()}`
    const store = await createStore({ storage: indexedDbStorage({ name }) })
    const { session_id } = await store.create({ title: 'kept chat' })
    const { entry_id } = await store.append({ session_id, message: user('walrus tusk') })
    const second = (await store.append({ session_id, message: user('tusk') })).entry_id
    await store.flush()
    const head = hostOf(store).head(session_id)!
    // A version 2 index as the previous release wrote it: packed documents, one record each, the
    // session's current mark, words the store does not hold.
    const v2 = await openDB(`${name}:search`, 2, {
      upgrade(db) {
        db.createObjectStore('sessions', { keyPath: 'sid' })
        db.createObjectStore('docs', { keyPath: ['sid', 'eid'] })
      },
    })
    const meta = { role: 'user', ts: 1, parent: null, rev: 0, len: 1 }
    const packed = (word: string) => ({ terms: word, sizes: new Uint16Array([word.length, 1]) })
    await v2.put('sessions', {
      sid: session_id,
      mark: markOf(head),
      title: { ...meta, sid: session_id, eid: null, role: 'title', rev: -1, ...packed('stale') },
    })
    await v2.put('docs', { ...meta, sid: session_id, eid: entry_id, ...packed('zebra') })
    await v2.put('docs', { ...meta, sid: session_id, eid: 'gone', ...packed('zebra') })
    v2.close()

    const search = await enableSearch(store)
    const found = async (query: string) =>
      (await search.query({ query, prefix: false })).hits.map((h) => h.entry_id).sort()
    expect(await found('walrus')).toEqual([entry_id])
    expect(await found('tusk')).toEqual([entry_id, second].sort())
    expect(await found('kept')).toEqual([null])
    expect(await found('zebra')).toEqual([])
    expect(await found('stale')).toEqual([])
    await search.flush()
    await expectOnlyBlocks(name, [[entry_id, second]], 'tuskwalrustusk', [4, 1, 6, 1, 4, 1])
    search.close()
    await store.close()
  })

  it('rewrites only the last block when a long session grows, and reloads every block', async () => {
    const name = `search-blocks-${crypto.randomUUID()}`
    let store = await createStore({ storage: indexedDbStorage({ name }) })
    let search = await enableSearch(store)
    const { session_id } = await store.create({ title: 'long' })
    const first = BLOCK_DOCS * 2 + 5
    await store.appendMany({
      session_id,
      messages: Array.from({ length: first }, (_, i) => user(`word${i} common`)),
    })
    await search.flush()
    const written: number[] = []
    const put = IDBObjectStore.prototype.put
    const spy = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
      this: IDBObjectStore,
      ...args: Parameters<IDBObjectStore['put']>
    ) {
      if (this.name === 'blocks') written.push((args[0] as { n: number }).n)
      return put.apply(this, args)
    })
    try {
      await store.append({ session_id, message: user('appended later') })
      await search.flush()
    } finally {
      spy.mockRestore()
    }
    // The last block only (it had room): the two full ones before it are not written again.
    expect(written).toEqual([2])
    search.close()
    await store.close()

    store = await createStore({ storage: indexedDbStorage({ name }) })
    search = await enableSearch(store)
    // Every document of every block, read back from disk.
    for (let i = 0; i < first; i++)
      expect((await search.query({ query: `word${i}`, prefix: false })).hits).toHaveLength(1)
    expect((await search.query({ query: 'appended' })).hits).toHaveLength(1)
    search.close()
    await store.close()
  })

  it('reads nothing of the index database before the first query, then all of it', async () => {
    const name = `search-lazy-${crypto.randomUUID()}`
    let store = await createStore({ storage: indexedDbStorage({ name }) })
    let search = await enableSearch(store)
    const { session_id } = await store.create({ title: 'chat' })
    await store.append({ session_id, message: user('narwhal') })
    await search.flush()
    search.close()
    await store.close()

    // Each transaction opened on the index's database, by the stores it covers.
    const opened: string[][] = []
    const transaction = IDBDatabase.prototype.transaction
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (
      this: IDBDatabase,
      ...args: Parameters<IDBDatabase['transaction']>
    ) {
      if (this.name === `${name}:search`) opened.push(typeof args[0] === 'string' ? [args[0]] : [...args[0]])
      return transaction.apply(this, args)
    })
    try {
      store = await createStore({ storage: indexedDbStorage({ name }) })
      search = await enableSearch(store)
      // The app's first screen: its reads announce sessions, which load nothing.
      await store.list({ limit: 10 })
      await store.messages({ session_id, limit: 10 })
      expect(opened).toEqual([])
      expect((await search.query({ query: 'narwhal' })).hits).toHaveLength(1)
      expect(opened).toContainEqual(['blocks'])
    } finally {
      spy.mockRestore()
    }
    search.close()
    await store.close()
  })
})
