import { afterEach, describe, expect, it } from 'vitest'
import {
  createStore,
  indexedDbStorage,
  type SessionEntry,
  type SessionHead,
  type Store,
} from '../src/index.js'
import { idbStores, user } from './idb-stores.js'

// IndexedDB's append-only layout (schema version 3, kept by version 4) in Chromium: an append
// writes its entry and nothing else, the head's leaf, counts and dates are found again on open,
// version-2 and version-3 databases are upgraded in place, and the multi-tab guarantees hold on
// the new layout.

const { dbName } = idbStores('append-layout')
const extra: Store[] = []
afterEach(async () => {
  for (const s of extra.splice(0)) await s.close()
})
/** A store without the relay (it learns of other stores' writes only from the disk), optionally on a fixed clock. */
const silentOn = async (name: string, now?: () => number): Promise<Store> => {
  const s = await createStore({ storage: indexedDbStorage({ name }), multiTab: false, now })
  extra.push(s)
  return s
}
const closeNow = async (s: Store): Promise<void> => {
  await s.close()
  extra.splice(extra.indexOf(s), 1)
}

const req = <T>(r: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
const rawOpen = (name: string, version?: number, upgrade?: (db: IDBDatabase) => void): Promise<IDBDatabase> =>
  new Promise((resolve, reject) => {
    const r = indexedDB.open(name, version)
    r.onupgradeneeded = () => upgrade?.(r.result)
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
const committed = (tx: IDBTransaction): Promise<void> =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve()
    tx.onabort = tx.onerror = () => reject(tx.error)
  })
/** Every record of a store, raw. */
const rawAll = async (name: string, store: string): Promise<unknown[]> => {
  const db = await rawOpen(name)
  try {
    return await req(db.transaction(store).objectStore(store).getAll())
  } finally {
    db.close()
  }
}
const ids = async (s: Store, session_id: string): Promise<string[]> =>
  (await s.messages({ session_id })).messages.map((m) => m.entry_id)
const texts = async (s: Store, session_id: string): Promise<string[]> =>
  (await s.messages({ session_id })).messages.map(
    (m) => (m.message!.content as Array<{ text: string }>)[0].text,
  )

describe('append-only IndexedDB layout', () => {
  it('an append writes its entry and its order record, never the head record; leaf, count and updated_at are found again on open', async () => {
    const name = dbName()
    let clock = 1_000
    const a = await silentOn(name, () => clock)
    const { session_id } = await a.create({ title: 'kept' })
    const [before] = (await rawAll(name, 'sessions')) as SessionHead[]
    const scopes: string[][] = []
    const transaction = IDBDatabase.prototype.transaction
    IDBDatabase.prototype.transaction = function (
      this: IDBDatabase,
      stores: string | string[],
      ...rest: unknown[]
    ) {
      scopes.push([stores].flat())
      return (transaction as (...a: unknown[]) => IDBTransaction).call(this, stores, ...rest)
    } as typeof transaction
    const appended: string[] = []
    try {
      for (let i = 0; i < 5; i++) {
        clock += 10
        appended.push((await a.append({ session_id, message: user(`m${i}`) })).entry_id)
      }
    } finally {
      IDBDatabase.prototype.transaction = transaction
    }
    // The entry and the session's small order record (version 6: written with every head).
    expect(scopes).toStrictEqual(Array.from({ length: 5 }, () => ['entries', 'order']))
    // The head record on disk is the one the create wrote.
    expect(await rawAll(name, 'sessions')).toStrictEqual([before])
    const live = (await a.get({ session_id }))!.meta
    expect(live).toMatchObject({ title: 'kept', message_count: 5, updated_at: 1_050 })

    const b = await silentOn(name)
    expect((await b.get({ session_id }))!.meta).toStrictEqual(live)
    expect((await b.list({})).sessions).toStrictEqual([live])
    expect(await ids(b, session_id)).toStrictEqual(appended)
    // Entries come back as they were appended: the stamp stays inside the storage.
    const first = (await b.getMessage({ session_id, entry_id: appended[0] }))!.entry
    expect(Object.keys(first).sort()).toStrictEqual([
      'id',
      'kind',
      'message',
      'parent_id',
      'revision',
      'timestamp',
    ])
  })

  it('opens a version-2 database in place: every session, entry, leaf and count, then appends on it', async () => {
    const name = dbName()
    const entry = (id: string, parent_id: string | null, text: string, t: number): SessionEntry =>
      ({ id, parent_id, timestamp: t, revision: 0, kind: 'message', message: user(text) }) as SessionEntry
    const meta = (session_id: string, message_count: number, updated_at: number, title: string) => ({
      session_id,
      title,
      description: '',
      status: 'idle',
      kind: 'user',
      created_at: 10,
      updated_at,
      message_count,
    })
    // s1: two branches, the leaf on the older one; s2: a custom entry beside a message.
    const s1 = [entry('e1', null, 'root', 11), entry('e2', 'e1', 'left', 12), entry('e3', 'e1', 'right', 13)]
    const s2: SessionEntry[] = [
      entry('f1', null, 'hello', 21),
      {
        id: 'f2',
        parent_id: 'f1',
        timestamp: 22,
        revision: 0,
        kind: 'custom',
        custom_type: 'note',
        data: { n: 1 },
      } as SessionEntry,
    ]
    const heads = [
      { meta: meta('s1', 3, 13, 'branches'), leaf: 'e2', v: 7 },
      { meta: meta('s2', 1, 22, 'custom'), leaf: 'f2', v: 4 },
    ]
    // Version 2 as the previous build wrote it, with raw IndexedDB.
    const old = await rawOpen(name, 2, (db) => {
      db.createObjectStore('sessions')
      db.createObjectStore('entries')
      db.createObjectStore('outbox', { autoIncrement: true })
      db.createObjectStore('kv')
      db.createObjectStore('attachments')
    })
    const tx = old.transaction(['sessions', 'entries', 'kv'], 'readwrite')
    for (const h of heads) tx.objectStore('sessions').put(h, h.meta.session_id)
    for (const e of s1) tx.objectStore('entries').put(e, ['s1', e.id])
    for (const e of s2) tx.objectStore('entries').put(e, ['s2', e.id])
    tx.objectStore('kv').put({ kept: true }, 'checkpoint')
    await committed(tx)
    old.close()

    const a = await silentOn(name)
    const listed = (await a.list({})).sessions
    expect(listed.map((m) => [m.session_id, m.message_count, m.updated_at, m.title]).sort()).toStrictEqual([
      ['s1', 3, 13, 'branches'],
      ['s2', 1, 22, 'custom'],
    ])
    // Listed through the order records the upgrade wrote (version 6), in the contract's orders.
    expect(listed.map((m) => m.session_id)).toStrictEqual(['s2', 's1'])
    expect(
      (await a.list({ order: 'created_asc', limit: 1 })).sessions.map((m) => m.session_id),
    ).toStrictEqual(['s1'])
    expect(await ids(a, 's1')).toStrictEqual(['e1', 'e2'])
    expect((await a.getMessage({ session_id: 's1', entry_id: 'e3' }))!.entry).toStrictEqual(s1[2])
    expect((await a.getMessage({ session_id: 's2', entry_id: 'f1' }))!.entry).toStrictEqual(s2[0])
    const tree = await a.messages({ session_id: 's2' })
    expect(tree.messages.map((m) => m.entry_id)).toStrictEqual(['f1'])

    // The upgraded database is version 6 and holds every record it held.
    const raw = await rawOpen(name)
    expect(raw.version).toBe(6)
    expect([...raw.transaction('entries').objectStore('entries').indexNames]).toStrictEqual(['stamps'])
    const entries = (await req(raw.transaction('entries').objectStore('entries').getAll())) as Array<{
      id?: string
    }>
    expect(
      entries
        .filter((e) => e.id !== undefined)
        .map((e) => e.id)
        .sort(),
    ).toStrictEqual(['e1', 'e2', 'e3', 'f1', 'f2'])
    expect(await req(raw.transaction('kv').objectStore('kv').get('checkpoint'))).toStrictEqual({ kept: true })
    raw.close()

    // Appending continues from the old leaf and counts on from the old count, after a reopen too.
    const added = await a.append({ session_id: 's1', message: user('after upgrade') })
    expect(added.parent_id).toBe('e2')
    await closeNow(a)
    const b = await silentOn(name)
    expect(await ids(b, 's1')).toStrictEqual(['e1', 'e2', added.entry_id])
    expect((await b.get({ session_id: 's1' }))!.meta.message_count).toBe(4)
    expect((await b.get({ session_id: 's2' }))!.meta).toMatchObject({ message_count: 1, updated_at: 22 })
  })

  it('opens a version-4 database with data: order records from each head and its newest stamp, then pages', async () => {
    const name = dbName()
    const meta = (session_id: string, created_at: number, updated_at: number) => ({
      session_id,
      title: session_id,
      description: '',
      status: 'idle',
      kind: 'user',
      created_at,
      updated_at,
      message_count: 0,
    })
    // Version 4 as the previous build wrote it: heads, markers stamped with their `v`, and on s1
    // an appended entry whose stamp carries a later updated_at than its head record.
    const old = await rawOpen(name, 4, (db) => {
      for (const s of ['sessions', 'kv', 'attachments']) db.createObjectStore(s)
      db.createObjectStore('outbox', { autoIncrement: true })
      db.createObjectStore('entries').createIndex('stamps', ['h.s', 'h.o'])
    })
    const tx = old.transaction(['sessions', 'entries'], 'readwrite')
    const ids3 = ['s1', 's2', 's3']
    for (const [i, id] of ids3.entries()) {
      tx.objectStore('sessions').put({ meta: meta(id, i + 1, 10 * (i + 1)), leaf: null, v: 1 }, id)
      tx.objectStore('entries').put({ h: { s: id, v: 1, o: -1, i: `inc-${id}` } }, [id, 0])
    }
    const e1 = {
      id: 'e1',
      parent_id: null,
      timestamp: 5,
      revision: 0,
      kind: 'message',
      message: user('late'),
    }
    tx.objectStore('entries').put({ ...e1, h: { s: 's1', v: 2, o: -2, i: 'inc-s1', l: 'e1', n: 1, u: 99 } }, [
      's1',
      'e1',
    ])
    await committed(tx)
    old.close()

    const a = await silentOn(name)
    const byUpdated = await a.list({ limit: 2 })
    expect(byUpdated.sessions.map((m) => [m.session_id, m.updated_at, m.message_count])).toStrictEqual([
      ['s1', 99, 1],
      ['s3', 30, 0],
    ])
    const rest = await a.list({ limit: 2, cursor: byUpdated.next_cursor })
    expect(rest.sessions.map((m) => m.session_id)).toStrictEqual(['s2'])
    expect(rest.next_cursor).toBeUndefined()
    expect((await a.list({ order: 'created_desc' })).sessions.map((m) => m.session_id)).toStrictEqual([
      's3',
      's2',
      's1',
    ])
    // Appending moves a session up: its order record is written with the entry.
    await a.append({ session_id: 's2', message: user('now') })
    expect((await a.list({ limit: 1 })).sessions[0].session_id).toBe('s2')
    const raw = await rawOpen(name)
    expect(raw.version).toBe(6)
    const order = (await req(raw.transaction('order').objectStore('order').getAll())) as Array<{
      s: string
      u: number
    }>
    // Each order record whole (version 6): the newest stamp's leaf, count, `v` and incarnation.
    expect(order.find((o) => o.s === 's1')).toStrictEqual({
      s: 's1',
      u: 99,
      c: 1,
      t: 'idle',
      k: 'user',
      l: 'e1',
      n: 1,
      v: 2,
      i: 'inc-s1',
    })
    expect(order.find((o) => o.s === 's3')).toStrictEqual({
      s: 's3',
      u: 30,
      c: 3,
      t: 'idle',
      k: 'user',
      l: null,
      n: 0,
      v: 1,
      i: 'inc-s3',
    })
    expect(order.find((o) => o.s === 's2')).toMatchObject({ n: 1, v: 2, i: 'inc-s2' })
    raw.close()
  })

  it('opens a version-5 database with data: each order record gains the leaf, count, v and incarnation of its newest stamp', async () => {
    const name = dbName()
    const meta = (session_id: string, created_at: number, updated_at: number, message_count = 0) => ({
      session_id,
      title: session_id,
      description: '',
      status: 'idle',
      kind: 'user',
      created_at,
      updated_at,
      message_count,
    })
    // Version 5 as the previous build wrote it: heads, stamps, and order records holding only
    // the sort keys and filters. s1 was appended to twice after its head record was written
    // (its newest stamp, on e2, is ahead of the record); s2 was only created.
    const old = await rawOpen(name, 5, (db) => {
      for (const s of ['sessions', 'kv', 'attachments']) db.createObjectStore(s)
      db.createObjectStore('outbox', { autoIncrement: true })
      db.createObjectStore('entries').createIndex('stamps', ['h.s', 'h.o'])
      const order = db.createObjectStore('order')
      order.createIndex('updated', ['u', 's'])
      order.createIndex('created', ['c', 's'])
    })
    const tx = old.transaction(['sessions', 'entries', 'order'], 'readwrite')
    const put = (id: string, m: ReturnType<typeof meta>) => {
      tx.objectStore('sessions').put({ meta: m, leaf: null, v: 1 }, id)
      tx.objectStore('entries').put({ h: { s: id, v: 1, o: -1, i: `inc-${id}` } }, [id, 0])
    }
    put('s1', meta('s1', 1, 10))
    put('s2', meta('s2', 2, 20))
    const e = (id: string, parent: string | null) => ({
      id,
      parent_id: parent,
      timestamp: 5,
      revision: 0,
      kind: 'message',
      message: user(id),
    })
    tx.objectStore('entries').put(
      { ...e('e1', null), h: { s: 's1', v: 2, o: -2, i: 'inc-s1', l: 'e1', n: 1, u: 30 } },
      ['s1', 'e1'],
    )
    tx.objectStore('entries').put(
      { ...e('e2', 'e1'), h: { s: 's1', v: 3, o: -3, i: 'inc-s1', l: 'e2', n: 2, u: 40 } },
      ['s1', 'e2'],
    )
    tx.objectStore('order').put({ s: 's1', u: 40, c: 1, t: 'idle', k: 'user' }, 's1')
    tx.objectStore('order').put({ s: 's2', u: 20, c: 2, t: 'idle', k: 'user' }, 's2')
    await committed(tx)
    old.close()

    const a = await silentOn(name)
    // Listed and read from the order records alone (no stamp is read for a head any more).
    expect((await a.list({})).sessions).toStrictEqual([meta('s1', 1, 40, 2), meta('s2', 2, 20)])
    expect((await a.get({ session_id: 's1' }))!.meta).toStrictEqual(meta('s1', 1, 40, 2))
    const raw = await rawOpen(name)
    expect(raw.version).toBe(6)
    const order = await req(raw.transaction('order').objectStore('order').getAll())
    expect(order).toStrictEqual([
      { s: 's1', u: 40, c: 1, t: 'idle', k: 'user', l: 'e2', n: 2, v: 3, i: 'inc-s1' },
      { s: 's2', u: 20, c: 2, t: 'idle', k: 'user', l: null, n: 0, v: 1, i: 'inc-s2' },
    ])
    raw.close()
    // Writing goes on from the upgraded heads: the append's parent is the stamp's leaf, and the
    // commit's check against the newest stamp (same `v`, same incarnation) passes first time.
    const reruns = a.engine.reruns
    const added = await a.append({ session_id: 's1', message: user('after upgrade') })
    expect(added.parent_id).toBe('e2')
    expect(a.engine.reruns).toBe(reruns)
    await closeNow(a)
    const b = await silentOn(name)
    expect(await ids(b, 's1')).toStrictEqual(['e1', 'e2', added.entry_id])
    expect((await b.get({ session_id: 's1' }))!.meta.message_count).toBe(3)
  })

  it('opens a version-3 database in place, and code of version 3 (writing without the writer lock) is shut out', async () => {
    const name = dbName()
    const a = await silentOn(name)
    const { session_id } = await a.create({ title: 'kept' })
    const first = await a.append({ session_id, message: user('one') })
    await closeNow(a)
    // Back to version 3, as the previous build left it: the same stores, index and records.
    const before = { sessions: await rawAll(name, 'sessions'), entries: await rawAll(name, 'entries') }
    const v4 = await rawOpen(name)
    // (The order records came with version 5.)
    const stores = [...v4.objectStoreNames].filter((s) => s !== 'order')
    v4.close()
    // A version cannot go down: delete the database and build it again at 3, index included.
    await req(indexedDB.deleteDatabase(name) as unknown as IDBRequest<unknown>)
    const old = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open(name, 3)
      r.onupgradeneeded = () => {
        for (const s of stores)
          r.result.createObjectStore(s, s === 'outbox' ? { autoIncrement: true } : undefined)
        r.transaction!.objectStore('entries').createIndex('stamps', ['h.s', 'h.o'])
      }
      r.onsuccess = () => resolve(r.result)
      r.onerror = () => reject(r.error)
    })
    const tx = old.transaction(['sessions', 'entries'], 'readwrite')
    for (const h of before.sessions as SessionHead[]) tx.objectStore('sessions').put(h, h.meta.session_id)
    for (const e of before.entries as Array<{ id?: string; h?: { s: string } }>)
      tx.objectStore('entries').put(e, [e.h?.s ?? session_id, e.id ?? 0])
    await committed(tx)
    // A tab of version 3 keeps its connection open; opening at 4 asks it to close.
    let asked = false
    old.onversionchange = () => {
      asked = true
      old.close()
    }
    const b = await silentOn(name)
    expect(asked).toBe(true)
    expect(await ids(b, session_id)).toStrictEqual([first.entry_id])
    const second = await b.append({ session_id, message: user('two') })
    expect(second.parent_id).toBe(first.entry_id)
    // Nor can it open the database again to write beside the lock's holder.
    await expect(rawOpen(name, 3)).rejects.toMatchObject({ name: 'VersionError' })
    const raw = await rawOpen(name)
    expect(raw.version).toBe(6)
    raw.close()
  })

  it('two stores on one database appending at once end on one chain holding every entry', async () => {
    const name = dbName()
    const a = await silentOn(name)
    const b = await silentOn(name)
    const { session_id } = await a.create({})
    await b.list({})
    const run = async (s: Store, tag: string): Promise<string[]> => {
      const out: string[] = []
      for (let i = 0; i < 25; i++)
        out.push((await s.append({ session_id, message: user(`${tag}${i}`) })).entry_id)
      return out
    }
    const [fromA, fromB] = await Promise.all([run(a, 'a'), run(b, 'b')])
    const c = await silentOn(name)
    const chain = await ids(c, session_id)
    expect(chain).toHaveLength(50)
    expect([...chain].sort()).toStrictEqual([...fromA, ...fromB].sort())
    // Each store's own appends stay in its order along the one chain.
    expect(chain.filter((id) => fromA.includes(id))).toStrictEqual(fromA)
    expect(chain.filter((id) => fromB.includes(id))).toStrictEqual(fromB)
    expect((await c.get({ session_id }))!.meta.message_count).toBe(50)
    // Both stores converge on what is on disk with their next commit.
    for (const s of [a, b]) {
      await s.append({ session_id, message: user('last') })
      expect((await ids(s, session_id)).slice(0, 50)).toStrictEqual(chain)
    }
  })

  it('an update of the entry holding the newest stamp by another store is seen: no lost update', async () => {
    const name = dbName()
    const a = await silentOn(name)
    const { session_id } = await a.create({})
    const { entry_id } = await a.append({ session_id, message: user('draft') })
    const b = await silentOn(name)
    expect(await texts(b, session_id)).toStrictEqual(['draft'])
    // a rewrites the very record that holds the stamp b's copy was read at.
    await a.updateMessage({
      session_id,
      entry_id,
      content: [{ type: 'text', text: 'from a' }],
      expected_revision: 0,
    })
    const late = await b.updateMessage({
      session_id,
      entry_id,
      content: [{ type: 'text', text: 'from b' }],
      expected_revision: 0,
    })
    expect(late).toStrictEqual({ updated: false, revision: 1 })
    expect(await texts(b, session_id)).toStrictEqual(['from a'])
    const c = await silentOn(name)
    expect(await texts(c, session_id)).toStrictEqual(['from a'])
    expect((await c.getMessage({ session_id, entry_id }))!.entry.revision).toBe(1)
  })

  it('a stale store does not append to the chain of a session deleted and created again under its id', async () => {
    const name = dbName()
    // One clock for both: the new session's meta, leaf and version equal the old ones.
    const now = (): number => 5_000
    const a = await silentOn(name, now)
    await a.ensure({ session_id: 's1', title: 't' })
    await a.append({ session_id: 's1', entry_id: 'x1', message: user('old one') })
    await a.append({ session_id: 's1', entry_id: 'x2', message: user('old two') })
    const b = await silentOn(name, now)
    expect(await texts(b, 's1')).toStrictEqual(['old one', 'old two'])
    await a.delete({ session_id: 's1' })
    await a.ensure({ session_id: 's1', title: 't' })
    await a.append({ session_id: 's1', entry_id: 'x1', message: user('new one') })
    await a.append({ session_id: 's1', entry_id: 'x2', message: user('new two') })
    // b still holds the old session, identical in every head field.
    const added = await b.append({ session_id: 's1', message: user('from b') })
    expect(added.parent_id).toBe('x2')
    const c = await silentOn(name)
    expect(await texts(c, 's1')).toStrictEqual(['new one', 'new two', 'from b'])
    // b's memory is the disk again, not the old chain.
    expect(await texts(b, 's1')).toStrictEqual(['new one', 'new two', 'from b'])
    expect((await c.get({ session_id: 's1' }))!.meta.message_count).toBe(3)
  })

  it('leaf, counts and updated_at after appends, updates, leaf moves and meta changes match after reopening', async () => {
    const name = dbName()
    let clock = 100
    const a = await silentOn(name, () => (clock += 7))
    const { session_id } = await a.create({ title: 'mix' })
    const m1 = await a.append({ session_id, message: user('one') })
    const m2 = await a.append({ session_id, message: user('two') })
    await a.updateMessage({
      session_id,
      entry_id: m2.entry_id,
      content: [{ type: 'text', text: 'two, edited' }],
    })
    await a.setMeta({ session_id, title: 'renamed' })
    const m3 = await a.append({ session_id, parent_id: m1.entry_id, message: user('branch') })
    await a.append({ session_id, custom: { custom_type: 'marker', data: null } })
    await a.setActiveLeaf({ session_id, entry_id: m2.entry_id })
    await a.updateMessage({
      session_id,
      entry_id: m3.entry_id,
      content: [{ type: 'text', text: 'branch, edited' }],
    })
    const live = {
      meta: (await a.get({ session_id }))!.meta,
      path: await texts(a, session_id),
      list: (await a.list({})).sessions,
    }
    expect(live.meta).toMatchObject({ title: 'renamed', message_count: 3 })
    expect(live.path).toStrictEqual(['one', 'two, edited'])
    await closeNow(a)
    const b = await silentOn(name)
    expect((await b.get({ session_id }))!.meta).toStrictEqual(live.meta)
    expect((await b.list({})).sessions).toStrictEqual(live.list)
    expect(await texts(b, session_id)).toStrictEqual(live.path)
    expect((await b.getMessage({ session_id, entry_id: m3.entry_id }))!.entry.revision).toBe(1)
    // And the store keeps writing on the reopened head.
    const m4 = await b.append({ session_id, message: user('three') })
    expect(m4.parent_id).toBe(m2.entry_id)
    expect((await b.get({ session_id }))!.meta.message_count).toBe(4)
  })
})
