import { describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage } from '../src/index.js'
import { createDatabase, idbStores } from './idb-stores.js'

// The code that creates a database's stores or upgrades an older layout is fetched by the first
// open that needs it (the upgrade is called off, and the database opened again once the code is
// here): a page opening its current database never fetches it. Each browser test file runs in a
// fresh module graph, so nothing here has fetched it before this file.

const { dbName, storeOn } = idbStores('idb-upgrade')

describe('store creation and upgrades fetched on demand (Chromium)', () => {
  // The upgrade module's fetch, from the timeline and from an observer: the timeline keeps only
  // its first 250 entries unless told otherwise, and an engine may add an entry a task after the
  // module it records has run (a WebKit run once missed it), so the fetch is awaited, not sampled.
  performance.setResourceTimingBufferSize(100_000)
  const observed: PerformanceEntry[] = []
  new PerformanceObserver((list) => observed.push(...list.getEntries())).observe({
    type: 'resource',
    buffered: true,
  })
  const upgradeFetch = (): PerformanceEntry | undefined =>
    [...performance.getEntriesByType('resource'), ...observed].find((r) =>
      /\/src\/storage\/idb\/idb-upgrade\.ts/.test(r.name),
    )

  it('opening a current database fetches no upgrade code; a new one is created whole once it is fetched', async () => {
    // A database already at the current layout (version 6), made by hand.
    const current = dbName()
    await createDatabase(current, 6, (db) => {
      for (const s of ['sessions', 'kv', 'attachments']) db.createObjectStore(s)
      db.createObjectStore('outbox', { autoIncrement: true })
      db.createObjectStore('entries').createIndex('stamps', ['h.s', 'h.o'])
      const order = db.createObjectStore('order')
      order.createIndex('updated', ['u', 's'])
      order.createIndex('created', ['c', 's'])
    })
    const a = await storeOn(current)
    await a.list()
    expect(upgradeFetch()).toBeUndefined()

    // The fetch comes after this point, not before: an entry that arrived late for the check
    // above would start before it.
    const opened = performance.now()
    const fresh = dbName()
    const b = await storeOn(fresh)
    await expect.poll(() => upgradeFetch()?.startTime, { timeout: 5_000 }).toBeGreaterThanOrEqual(opened)
    const { session_id } = await b.create({ title: 'T' })
    await b.append({
      session_id,
      message: { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 0 },
    })
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open(fresh)
      r.onsuccess = () => resolve(r.result)
      r.onerror = () => reject(r.error)
    })
    expect(db.version).toBe(6)
    expect([...db.objectStoreNames].sort()).toStrictEqual([
      'attachments',
      'entries',
      'kv',
      'order',
      'outbox',
      'sessions',
    ])
    expect([...db.transaction('order').objectStore('order').indexNames].sort()).toStrictEqual([
      'created',
      'updated',
    ])
    expect([...db.transaction('entries').objectStore('entries').indexNames]).toStrictEqual(['stamps'])
    db.close()
  })

  it('a database of a newer version is refused once, not opened again and again', async () => {
    const name = dbName()
    await new Promise<void>((resolve, reject) => {
      const r = indexedDB.open(name, 9)
      r.onsuccess = () => (r.result.close(), resolve())
      r.onerror = () => reject(r.error)
    })
    let opens = 0
    const open = indexedDB.open.bind(indexedDB)
    indexedDB.open = ((n: string, v?: number) => (opens++, open(n, v))) as typeof indexedDB.open
    try {
      await expect(
        createStore({ storage: indexedDbStorage({ name }), multiTab: false }),
      ).rejects.toMatchObject({ name: 'VersionError' })
    } finally {
      indexedDB.open = open
    }
    expect(opens).toBeLessThanOrEqual(2)
  })
})
