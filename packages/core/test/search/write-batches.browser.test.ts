import { afterEach, describe, expect, it, vi } from 'vitest'
import { openDB } from 'idb'
import { createStore, indexedDbStorage, type Store } from '../../src/index.js'
import { enableSearch } from '../../src/search/index.js'
import { WRITE_BATCH } from '../../src/search/enable-search.js'
import { BLOCK_DOCS } from '../../src/search/doc-block.js'

const SESSIONS = 50
const PER_SESSION = 100

/** A store of `SESSIONS` sessions, each message holding its session's own word (`tagN`). */
async function filled(name: string): Promise<{ store: Store; ids: string[] }> {
  const store = await createStore({ storage: indexedDbStorage({ name }) })
  const ids: string[] = []
  for (let s = 0; s < SESSIONS; s++) {
    const { session_id } = await store.create({ title: `chat ${s}` })
    ids.push(session_id)
    await store.appendMany({
      session_id,
      messages: Array.from({ length: PER_SESSION }, (_, i) => ({
        role: 'user' as const,
        content: [{ type: 'text' as const, text: `tag${s} shared words ${i}` }],
        timestamp: i + 1,
      })),
    })
  }
  return { store, ids }
}

/**
 * The documents each write transaction on the index's database puts (counted at the requests,
 * whatever wraps them: a block counts its documents), and the blocks. `cut`: every such
 * transaction after the first is aborted at its first block, as if the page had died once the
 * first batch was on disk.
 */
function countIndexWrites(cut = false) {
  const puts = new Map<IDBTransaction, number>()
  let blocks = 0
  const put = IDBObjectStore.prototype.put
  const spy = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
    this: IDBObjectStore,
    ...args: Parameters<IDBObjectStore['put']>
  ) {
    const tx = this.transaction
    if (this.name === 'blocks' && tx.db.name.endsWith(':search')) {
      if (cut && puts.size && !puts.has(tx)) {
        tx.abort()
        throw new DOMException('cut off', 'AbortError')
      }
      puts.set(tx, (puts.get(tx) ?? 0) + (args[0] as { eids: string[] }).eids.length)
      blocks++
    }
    return put.apply(this, args)
  })
  return { puts, blocks: () => blocks, restore: () => spy.mockRestore() }
}

afterEach(() => vi.restoreAllMocks())

describe('search index: the first pass writes as it goes', () => {
  it('writes the first pass in bounded batches, never all documents at once', async () => {
    const name = `search-batches-${crypto.randomUUID()}`
    const { store } = await filled(name)
    const writes = countIndexWrites()
    const search = await enableSearch(store)
    await search.flush()
    writes.restore()
    const sizes = [...writes.puts.values()]
    // Every document written, none twice; each transaction at most a batch plus the session that crossed it.
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(SESSIONS * PER_SESSION)
    expect(Math.max(...sizes)).toBeLessThanOrEqual(WRITE_BATCH + PER_SESSION)
    // The store here is more than two batches: one transaction holding it all is what this rules out.
    expect(sizes.length).toBeGreaterThan(2)
    // A session's hundred documents are one block (one request), not a hundred.
    expect(writes.blocks()).toBe(SESSIONS * Math.ceil(PER_SESSION / BLOCK_DOCS))
    search.close()
    await store.close()
  })

  it('a first pass cut off after a batch is written catches up on reopen, every session found', async () => {
    const name = `search-cut-${crypto.randomUUID()}`
    const filling = await filled(name)
    let store = filling.store
    const ids = filling.ids
    const writes = countIndexWrites(true)
    let search = await enableSearch(store)
    await expect(search.flush()).rejects.toThrow('cut off')
    search.close()
    writes.restore()
    await store.close()

    // Part of the store is on disk, and each session there holds all its documents.
    const disk = await openDB(`${name}:search`)
    const marked = (await disk.getAll('sessions')) as { sid: string }[]
    for (const { sid } of marked) {
      const blocks = (await disk.getAll('blocks', IDBKeyRange.bound([sid], [sid, []]))) as {
        eids: string[]
      }[]
      expect(blocks.reduce((n, b) => n + b.eids.length, 0)).toBe(PER_SESSION)
    }
    expect(marked.length).toBeGreaterThan(0)
    expect(marked.length).toBeLessThan(SESSIONS)
    disk.close()

    store = await createStore({ storage: indexedDbStorage({ name }) })
    search = await enableSearch(store)
    for (const [s, sid] of ids.entries()) {
      const { hits } = await search.query({ query: `tag${s}`, prefix: false, limit: PER_SESSION })
      expect(hits.length).toBe(PER_SESSION)
      expect(new Set(hits.map((h) => h.session_id))).toEqual(new Set([sid]))
    }
    search.close()
    await store.close()
    const again = await openDB(`${name}:search`)
    const blocks = (await again.getAll('blocks')) as { eids: string[] }[]
    expect(blocks.reduce((n, b) => n + b.eids.length, 0)).toBe(SESSIONS * PER_SESSION)
    expect(await again.count('sessions')).toBe(SESSIONS)
    again.close()
  })
})

/** Read-write transactions opened on index databases (`<store>:search`) until `stop`. */
function countIndexTransactions(): { count: () => number; stop: () => void } {
  let n = 0
  const transaction = IDBDatabase.prototype.transaction
  const spy = vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (
    this: IDBDatabase,
    ...args: Parameters<IDBDatabase['transaction']>
  ) {
    if (this.name.endsWith(':search') && args[1] === 'readwrite') n++
    return transaction.apply(this, args)
  })
  return { count: () => n, stop: () => spy.mockRestore() }
}

describe('search index: keeping up with appends', () => {
  it('writes the index once per settling, however many appends it holds', async () => {
    const name = `search-appends-${crypto.randomUUID()}`
    const store = await createStore({ storage: indexedDbStorage({ name }) })
    // Nothing settles by itself here: only `flush` indexes and writes.
    const search = await enableSearch(store, { settleMs: 600_000 })
    const { session_id } = await store.create({ title: 'chat' })
    await search.flush()
    const tx = countIndexTransactions()
    for (let i = 0; i < 60; i++)
      await store.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: `note${i} shared` }], timestamp: i + 1 },
      })
    await search.flush()
    tx.stop()
    expect(tx.count()).toBe(1)
    expect((await search.query({ query: 'note59', prefix: false })).hits.length).toBe(1)
    search.close()
    await store.close()
    // What that one transaction wrote is what a reopen finds: no session read again.
    const again = await createStore({ storage: indexedDbStorage({ name }) })
    const reopened = await enableSearch(again)
    const after = countIndexTransactions()
    expect((await reopened.query({ query: 'shared', limit: 100 })).hits.length).toBe(60)
    after.stop()
    expect(after.count()).toBe(0)
    reopened.close()
    await again.close()
  })
})
