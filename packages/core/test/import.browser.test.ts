import { describe, expect, it } from 'vitest'
import type { Store } from '../src/index.js'
import { idbStores } from './idb-stores.js'
import { chain, importSuite, metaOf, onDisk } from './import-suite.js'

const { dbName, storeOn } = idbStores('core-import')
const names = new WeakMap<Store, string>()
const on = async (name: string): Promise<Store> => {
  const s = await storeOn(name)
  names.set(s, name)
  return s
}
const frame = (): Promise<void> => new Promise((r) => requestAnimationFrame(() => r()))

importSuite('IndexedDB in Chromium', { open: () => on(dbName()), reopen: (store) => on(names.get(store)!) })

describe('incremental import across tabs in Chromium', () => {
  it('another tab sees nothing while chunks are written, then the whole session live once committed', async () => {
    const name = dbName()
    const a = await on(name)
    const b = await on(name)
    const lists: string[][] = []
    b.sessions$().subscribe((l) => lists.push(l.map((m) => m.session_id)))
    const created: string[] = []
    b.on('session::created').subscribe((e) => created.push(e.session_id))
    const w = await a.beginImport('shared')
    for (let i = 0; i < 3_000; i += 1_000) await w.append(chain(i, i + 1_000))
    await frame()
    expect(lists.flat()).not.toContain('shared')
    expect(await b.get({ session_id: 'shared' })).toBeNull()
    // The other tab cannot start an import of the same session meanwhile (a Web Lock holds it).
    await expect(b.beginImport('shared')).rejects.toThrow('being imported')
    await w.commit({ meta: metaOf('shared'), active_leaf: 'e2999' })
    for (let i = 0; i < 50 && !lists.at(-1)?.includes('shared'); i++) await frame()
    expect(lists.at(-1)).toContain('shared')
    expect(created).toEqual(['shared'])
    expect((await b.getMessage({ session_id: 'shared', entry_id: 'e2999' }))?.entry.parent_id).toBe('e2998')
  })

  it('a large import (20,000 entries of 2 kB) is written chunk by chunk and left on disk, not in memory', async () => {
    const a = await on(dbName())
    const text = 'y'.repeat(2_000)
    // Progress reports each transaction on disk, with how many chunks the "parser" had made by then.
    const progress: Array<[number, number]> = []
    let made = 0
    const w = await a.beginImport('large', { chunkSize: 2_000, onProgress: (n) => progress.push([n, made]) })
    let previous: Promise<void> = Promise.resolve()
    for (let i = 0; i < 20_000; i += 2_000) {
      const next = w.append(chain(i, i + 2_000, (k) => `${k} ${text}`))
      made++
      next.catch(() => {})
      await previous
      previous = next
    }
    await previous
    expect(progress.map(([n]) => n)).toEqual([
      2_000, 4_000, 6_000, 8_000, 10_000, 12_000, 14_000, 16_000, 18_000, 20_000,
    ])
    // Writing overlapped making chunks, two in flight at most: chunk k was on disk before chunk k + 3 was made.
    for (const [k, [, madeThen]] of progress.entries()) expect(madeThen).toBeLessThanOrEqual(k + 2)
    expect(progress[0][1]).toBeLessThan(10)
    await w.commit({ meta: metaOf('large'), active_leaf: 'e19999' })
    expect(a.engine.state.sessions.get('large')?.entries).toBeUndefined()
    expect((await a.get({ session_id: 'large' }))?.meta.message_count).toBe(20_000)
    expect(await onDisk(a, 'large')).toBe(20_000)
  })
})
