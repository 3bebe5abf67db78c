import { afterEach, describe, expect, it } from 'vitest'
import { indexedDbStorage, type SessionEntry } from '../src/index.js'
import { idbStores } from './idb-stores.js'
import { entry, metaOf } from './import-suite.js'
import { noteLimit } from '../../../test/support/engine-limit.js'

// Opening a large session where the engine reads backwards (`getAll` with options: Chromium
// 141+, Firefox 153): its entries are read in two parts, one from each end of the key range, in
// one transaction (the browser reads one while the page decodes the other), guided by the head's
// message count. Where it cannot (WebKitGTK 2.50), one read takes the whole range. Whatever the
// count says, the read returns exactly what is on disk, in key order, once each.

const backwards = 'getAllRecords' in IDBObjectStore.prototype
/** What one read of the whole range asks: the key range, no count, no direction. */
const whole = [[undefined, undefined]]

const { dbName, storeOn } = idbStores('split-read')

/** `messages` message entries in one chain, then `custom` custom entries hung off its leaf. */
function session(messages: number, custom: number): { entries: SessionEntry[]; leaf: string } {
  const entries: SessionEntry[] = []
  for (let i = 0; i < messages; i++) entries.push(entry(i, i === 0 ? null : `e${i - 1}`))
  for (let k = 0; k < custom; k++) {
    const id = `c${k}`
    entries.push({
      id,
      parent_id: k === 0 ? `e${messages - 1}` : `c${k - 1}`,
      timestamp: 5_000 + k,
      revision: 0,
      kind: 'custom',
      custom_type: 'note',
      data: { k },
    } as SessionEntry)
  }
  return { entries, leaf: custom ? `c${custom - 1}` : `e${messages - 1}` }
}

/** Writes `s` as session `id` into a new database and closes it; returns the database name. */
async function seeded(id: string, s: { entries: SessionEntry[]; leaf: string }): Promise<string> {
  const name = dbName()
  const store = await storeOn(name)
  await store.importSession({ meta: metaOf(id), entries: s.entries, active_leaf: s.leaf })
  await store.close()
  return name
}

/** What `getAll` on the entries store was asked (a key range, or an options dictionary). */
type Asked = { range?: IDBKeyRange; count?: number; direction?: string }
const original = IDBObjectStore.prototype.getAll
let asked: Asked[] = []
function spyGetAll(): void {
  asked = []
  IDBObjectStore.prototype.getAll = function (this: IDBObjectStore, query?: unknown, count?: number) {
    if (this.name === 'entries') {
      const o =
        query instanceof IDBKeyRange || query === undefined
          ? { range: query as IDBKeyRange | undefined, count }
          : (query as { query: IDBKeyRange; count?: number; direction?: string })
      asked.push('query' in o ? { range: o.query, count: o.count, direction: o.direction } : o)
    }
    return original.apply(this, [query, count] as never)
  } as typeof original
}
afterEach(() => {
  IDBObjectStore.prototype.getAll = original
})

/** A store's IndexedDB storage opened on a fresh database seeded with `s` as session `id`. */
async function storageOf(id: string, s: { entries: SessionEntry[]; leaf: string }) {
  const storage = indexedDbStorage({ name: await seeded(id, s) })
  await storage.open()
  return storage
}

const byKey = (entries: readonly SessionEntry[]): string[] => entries.map((e) => e.id).sort()
const strip = (e: SessionEntry): SessionEntry => JSON.parse(JSON.stringify(e)) as SessionEntry

describe('a large session read from both ends', () => {
  it('is read in two parts, one backwards, in one transaction, and returns exactly what is on disk in key order', async (ctx) => {
    if (!backwards)
      noteLimit(
        ctx,
        'no getAll with a direction (getAllRecords): a large session is read in one part, not from both ends',
      )
    const s = session(1_200, 0)
    const storage = await storageOf('s1', s)
    spyGetAll()
    const got = await storage.entries('s1', 1_200)
    // Two thirds forwards, the rest (and one more: the overlap that proves nothing lies between) backwards.
    if (/Chrome\//.test(navigator.userAgent)) expect(backwards).toBe(true)
    expect(asked.map((a) => [a.count, a.direction])).toStrictEqual(
      backwards
        ? [
            [800, undefined],
            [401, 'prev'],
          ]
        : whole,
    )
    expect(got.map((e) => e.id)).toStrictEqual(byKey(s.entries))
    // Records as stored, stamps taken off: each equal to what was imported.
    const sent = new Map(s.entries.map((e) => [e.id, e]))
    for (const e of got) expect(strip(e)).toStrictEqual(strip(sent.get(e.id)!))
    storage.close()
  })

  it('reads what lies between the parts when the count is short (custom entries are not counted)', async () => {
    const s = session(1_000, 300)
    const storage = await storageOf('s2', s)
    spyGetAll()
    const got = await storage.entries('s2', 1_000)
    expect(asked).toHaveLength(backwards ? 3 : 1)
    expect(asked.at(-1)!.range).toBeInstanceOf(IDBKeyRange)
    expect(got.map((e) => e.id)).toStrictEqual(byKey(s.entries))
    storage.close()
  })

  it('keeps each entry once when the count is too high, and reads once for a small, absent or impossible count', async () => {
    const s = session(900, 0)
    const storage = await storageOf('s3', s)
    for (const [count, reads] of [
      [1_000, 2],
      [1_400, 2],
      [5_000, 2],
      [700, 1],
      [0, 1],
      [-5, 1],
      [NaN, 1],
      [1e12, 1],
    ] as const) {
      spyGetAll()
      const got = await storage.entries('s3', count)
      expect(
        got.map((e) => e.id),
        `count ${count}`,
      ).toStrictEqual(byKey(s.entries))
      expect(asked, `count ${count}`).toHaveLength(backwards ? reads : 1)
    }
    storage.close()
  })

  it('a fresh store shows the same transcript and tree as the store that wrote them', async () => {
    const s = session(1_000, 300)
    const name = await seeded('s4', s)
    spyGetAll()
    const store = await storeOn(name)
    const items = await new Promise<unknown[]>((resolve, reject) => {
      const sub = store
        .messages$({ session_id: 's4', include_custom: true })
        .subscribe({ next: (v) => (resolve(v), queueMicrotask(() => sub.unsubscribe())), error: reject })
    })
    expect(asked.filter((a) => a.direction === 'prev')).toHaveLength(backwards ? 1 : 0)
    expect(items.map((i) => (i as { entry_id: string }).entry_id)).toStrictEqual(s.entries.map((e) => e.id))
    const tree = await new Promise<{ entries: ReadonlyMap<string, SessionEntry> }>((resolve) => {
      const sub = store
        .tree$('s4')
        .subscribe((t) => t && (resolve(t), queueMicrotask(() => sub.unsubscribe())))
    })
    expect([...tree.entries.keys()].sort()).toStrictEqual(byKey(s.entries))
  })
})
