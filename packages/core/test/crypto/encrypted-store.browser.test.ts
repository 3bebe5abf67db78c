import { describe, expect, it, vi } from 'vitest'
import { BehaviorSubject, filter, firstValueFrom } from 'rxjs'
import {
  createStore,
  indexedDbStorage,
  memoryStorage,
  SessionError,
  type MessageItem,
  type Store,
} from '../../src/index.js'
import { hostOf } from '../../src/host.js'
import { enableSearch } from '../../src/search/index.js'
import { rawDb, rawText, req } from '../../../../test/support/raw-idb.js'

// The marker test in Chromium over real IndexedDB: a marker message, title, draft and attachment
// written through an encrypted store, and relayed to a second store on the same database (what
// another tab is: a store of its own, reached over BroadcastChannel), leave no byte of the marker
// in any record of the database, read raw. Records altered on disk are refused; a wrong
// passphrase decrypts and writes nothing; lock, unlock and passphrase changes reach the other
// store.

const MARK = 'Wx5marker'
const passphrase = 'correct horse battery staple'
let n = 0
const dbName = (): string => `encrypted-${Date.now()}-${n++}`

/** Rewrites one record of `store` in place, raw. */
async function rewrite(
  name: string,
  store: string,
  key: IDBValidKey,
  edit: (v: any) => unknown,
): Promise<void> {
  const db = await rawDb(name)
  try {
    const tx = db.transaction(store, 'readwrite')
    const s = tx.objectStore(store)
    s.put(edit(await req(s.get(key))), key)
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve
      tx.onabort = () => reject(tx.error)
    })
  } finally {
    db.close()
  }
}

const open = (name: string, secret: string = passphrase): Promise<Store> =>
  createStore({ storage: indexedDbStorage({ name }), encryption: { passphrase: secret } })

const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p
  } catch (e) {
    return e instanceof SessionError ? e.code : String(e)
  }
  return 'resolved'
}

const text = (t: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text: t }],
  timestamp: 1,
})

/**
 * A session of 900 entries imported into `store`: a branch of 880 from the root, and the active
 * one of 20 beside it (`active`: its ids, root first).
 */
async function importBranched(store: Store): Promise<{ session_id: string; active: string[] }> {
  // 900 entries: a branch of 880 from the root, and the active one of 20 beside it.
  const session_id = 's_branched'
  const entries = Array.from({ length: 900 }, (_, i) => ({
    id: `m_${String(i).padStart(3, '0')}`,
    parent_id: i === 0 || i === 881 ? (i === 0 ? null : 'm_000') : `m_${String(i - 1).padStart(3, '0')}`,
    timestamp: 1_000 + i,
    revision: 0,
    kind: 'message' as const,
    message: text(`line ${i}`),
  }))
  const active = ['m_000', ...entries.slice(881).map((e) => e.id)]
  await store.importSession({
    meta: {
      session_id,
      title: 'branched',
      description: '',
      status: 'idle',
      kind: 'user',
      created_at: 1_000,
      updated_at: 1_000,
      message_count: 900,
    },
    entries,
    active_leaf: 'm_899',
  })
  return { session_id, active }
}

describe('an encrypted store over IndexedDB (Chromium)', () => {
  it('holds no byte of the marker in any record, written here or relayed from another tab', async () => {
    const name = dbName()
    const a = await open(name)
    const b = await open(name)
    const { session_id } = await a.create({ title: `title ${MARK}`, metadata: { note: MARK } })
    const { entry_id } = await a.append({ session_id, message: text(`hello ${MARK}`) })
    const { attachment } = await a.putAttachment({
      session_id,
      name: `${MARK}.txt`,
      file: new Blob([`bytes ${MARK}`], { type: 'text/plain' }),
    })
    await a.setDraft({ session_id, draft: `draft ${MARK}`, attachment_ids: [attachment.attachment_id] })
    await a.flush()
    // Relayed to the other store, which answers in clear and writes on it too.
    const seen = await firstValueFrom(
      b.messages$({ session_id }).pipe(filter((items) => items.some((i) => i.entry_id === entry_id))),
    )
    expect(JSON.stringify(seen)).toContain(`hello ${MARK}`)
    const reply = await b.append({ session_id, message: text(`from b ${MARK}`) })
    await b.flush()
    await firstValueFrom(
      a.messages$({ session_id }).pipe(filter((items) => items.some((i) => i.entry_id === reply.entry_id))),
    )
    expect((await b.get({ session_id }))!.meta.draft).toBe(`draft ${MARK}`)
    expect(await (await b.getAttachmentBlob(session_id, attachment.attachment_id))!.text()).toBe(
      `bytes ${MARK}`,
    )

    const raw = await rawText(name)
    expect(raw).toContain(session_id) // the records are there, ids in clear
    expect(raw).toContain(entry_id)
    expect(raw).not.toContain(MARK)
    // A byte of the marker at a time would be too strict (base64 holds every letter); its
    // UTF-16 and base64 forms are not there either.
    expect(raw).not.toContain(btoa(MARK).slice(0, 8))
    await a.close()
    await b.close()
  })

  it('refuses swapped, replayed and flipped records with session/integrity', async () => {
    const name = dbName()
    const a = await open(name)
    const { session_id } = await a.create({ title: 'swap' })
    const one = await a.append({ session_id, message: text('one') })
    const two = await a.append({ session_id, message: text('two') })
    await a.updateMessage({
      session_id,
      entry_id: two.entry_id,
      content: [{ type: 'text', text: 'two, edited' }],
    })
    await a.flush()
    await a.close()
    const records = async () => {
      const db = await rawDb(name)
      const get = (k: IDBValidKey) => req(db.transaction('entries').objectStore('entries').get(k))
      const out = { one: await get([session_id, one.entry_id]), two: await get([session_id, two.entry_id]) }
      db.close()
      return out as {
        one: { box: ArrayBuffer; revision: number }
        two: { box: ArrayBuffer; revision: number }
      }
    }
    const before = await records()
    // Boxes are bytes at rest (a third smaller than base64 text).
    expect(before.one.box).toBeInstanceOf(ArrayBuffer)
    expect(before.two.box).toBeInstanceOf(ArrayBuffer)
    const fresh = async (check: (s: Store) => Promise<unknown>) => {
      const s = await open(name)
      try {
        return await codeOf(check(s))
      } finally {
        await s.close()
      }
    }
    const read = (s: Store) => s.messages({ session_id })
    expect(await fresh(read)).toBe('resolved')

    // Swapped: entry one's box under entry two.
    await rewrite(name, 'entries', [session_id, two.entry_id], (v) => ({ ...v, box: before.one.box }))
    expect(await fresh(read)).toBe('session/integrity')
    // Replayed: an older revision's box under the newer revision number.
    await rewrite(name, 'entries', [session_id, two.entry_id], (v) => ({
      ...v,
      box: before.two.box,
      revision: v.revision + 1,
    }))
    expect(await fresh(read)).toBe('session/integrity')
    // Flipped: one bit of the ciphertext.
    await rewrite(name, 'entries', [session_id, two.entry_id], (v) => {
      const bytes = new Uint8Array(before.two.box.slice(0))
      bytes[bytes.length - 5] ^= 1
      return { ...v, revision: before.two.revision, box: bytes.buffer }
    })
    expect(await fresh(read)).toBe('session/integrity')
    // The title's box moved to another field.
    await rewrite(name, 'entries', [session_id, two.entry_id], (v) => ({ ...v, box: before.two.box }))
    expect(await fresh(read)).toBe('resolved')
    await rewrite(name, 'sessions', session_id, (v) => ({
      ...v,
      meta: { ...v.meta, description: v.meta.title },
    }))
    expect(await fresh((s) => s.get({ session_id }))).toBe('session/integrity')
  })

  it('refuses attachment bytes moved to another attachment with session/integrity', async () => {
    const name = dbName()
    const a = await open(name)
    const { session_id } = await a.create({ title: 'files' })
    const put = (t: string) => a.putAttachment({ session_id, name: `${t}.txt`, file: new Blob([t]) })
    const [one, two] = [
      (await put('one')).attachment.attachment_id,
      (await put('two')).attachment.attachment_id,
    ]
    await a.close()
    const db = await rawDb(name)
    const bytesOne = await req(
      db.transaction('attachments').objectStore('attachments').get([session_id, one]),
    )
    db.close()
    await rewrite(name, 'attachments', [session_id, two], () => bytesOne)
    const b = await open(name)
    expect(await (await b.getAttachmentBlob(session_id, one))!.text()).toBe('one')
    expect(await codeOf(b.getAttachmentBlob(session_id, two))).toBe('session/integrity')
    await b.close()
  })

  it('an opened attachment is a Blob every platform API reads whole; a middle chunk altered on disk yields nothing', async () => {
    const name = dbName()
    const a = await open(name)
    const { session_id } = await a.create({ title: 'files' })
    // Four chunks and some: opened all at once, each copied into the answer as it opens.
    const bytes = new Uint8Array(4 * (2 ** 18 - 1) + 1000)
    for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
    const { attachment } = await a.putAttachment({ session_id, name: 'a.bin', file: new Blob([bytes]) })
    const id = attachment.attachment_id
    await a.close()
    /** Where `got` first differs from the bytes put, or 'same'. */
    const diff = (got: ArrayBuffer, from = 0, to = bytes.length): string => {
      const v = new Uint8Array(got)
      if (v.length !== to - from) return `length ${v.length}`
      for (let i = 0; i < v.length; i++) if (v[i] !== bytes[from + i]) return `byte ${from + i}`
      return 'same'
    }
    const b = await open(name)
    const read = async (): Promise<Blob> => (await b.getAttachmentBlob(session_id, id))!
    const blob = await read()
    expect(blob).toBeInstanceOf(Blob)
    expect([blob.size, blob.type]).toEqual([bytes.length, 'application/octet-stream'])
    const first = await blob.arrayBuffer()
    expect(diff(first)).toBe('same')
    new Uint8Array(first).fill(0) // the caller's own buffer: the Blob keeps its bytes
    expect(diff(await blob.arrayBuffer())).toBe('same')
    expect(diff(await new Response((await read()).stream()).arrayBuffer())).toBe('same')
    expect(
      diff(await (await read()).slice(2 ** 18 - 5, 2 ** 19 + 5).arrayBuffer(), 2 ** 18 - 5, 2 ** 19 + 5),
    ).toBe('same')
    const url = URL.createObjectURL(await read())
    try {
      expect(diff(await (await fetch(url)).arrayBuffer())).toBe('same')
    } finally {
      URL.revokeObjectURL(url)
    }
    const copy = await new Promise<IDBDatabase>((resolve, reject) => {
      const o = indexedDB.open(`${name}-copy`)
      o.onupgradeneeded = () => o.result.createObjectStore('b')
      o.onsuccess = () => resolve(o.result)
      o.onerror = () => reject(o.error)
    })
    const toKeep = await read()
    await req(copy.transaction('b', 'readwrite').objectStore('b').put(toKeep, 1))
    const kept = (await req(copy.transaction('b').objectStore('b').get(1))) as Blob
    expect(diff(await kept.arrayBuffer())).toBe('same')
    copy.close()
    await b.close()
    // One byte of the second chunk's ciphertext flipped on disk: the read answers nothing.
    const db = await rawDb(name)
    const stored = (await req(
      db.transaction('attachments').objectStore('attachments').get([session_id, id]),
    )) as Blob
    db.close()
    const raw = new Uint8Array(await stored.arrayBuffer())
    raw[1 + 4 + new DataView(raw.buffer).getUint32(1) + 4 + 100] ^= 1
    await rewrite(name, 'attachments', [session_id, id], () => new Blob([raw]))
    const c = await open(name)
    expect(await codeOf(c.getAttachmentBlob(session_id, id))).toBe('session/integrity')
    await c.close()
  })

  it('appends commit from memory as over a clear store: no rerun reading the disk, the entry their only record', async () => {
    const name = dbName()
    const a = await open(name)
    const { session_id } = await a.create({ title: 'serial' })
    await a.append({ session_id, message: text('first') })
    const reruns = a.engine.reruns
    for (let i = 0; i < 20; i++) await a.append({ session_id, message: text(`n ${i}`) })
    expect(a.engine.reruns).toBe(reruns)
    // Each append wrote its entry only: the head record is the one the first append left (the
    // meta's boxes were kept as they were, so the storage saw a change of the volatile part only).
    const db = await rawDb(name)
    const record = (await req(db.transaction('sessions').objectStore('sessions').get(session_id))) as {
      v: number
    }
    db.close()
    expect(hostOf(a).head(session_id)!.v).toBeGreaterThan(record.v + 19)
    await a.close()
  })

  it('a burst of appends to two sessions in one tick is sealed for each entry; a large session opens in parts, checked', async () => {
    const name = dbName()
    const a = await open(name)
    const [big, small] = await Promise.all([a.create({ title: 'big' }), a.create({ title: 'small' })])
    // One tick, interleaved: a batch that hands its entries over as it builds them (sealed then,
    // each bound to its own session and id), 900 in one session: read back in two parts.
    const texts = Array.from({ length: 1200 }, (_, i) => `burst ${i}`)
    const ids = await Promise.all(
      texts.map((t, i) => a.append({ session_id: (i % 4 === 3 ? small : big).session_id, message: text(t) })),
    )
    await a.flush()
    await a.close()
    const read = async (s: Store, session_id: string) => {
      const out: string[] = []
      let cursor: string | undefined
      do {
        const page = await s.messages({ session_id, limit: 500, ...(cursor && { cursor }) })
        for (const m of page.messages) out.push((m.message!.content as Array<{ text: string }>)[0].text)
        cursor = page.next_cursor ?? undefined
      } while (cursor)
      return out
    }
    const b = await open(name)
    expect(await read(b, big.session_id)).toEqual(texts.filter((_, i) => i % 4 !== 3))
    expect(await read(b, small.session_id)).toEqual(texts.filter((_, i) => i % 4 === 3))
    await b.close()
    // An entry of the part read first, swapped for another's box, is refused like any other.
    const first = ids[1]!.entry_id
    const other = ids[2]!.entry_id
    const db = await rawDb(name)
    const box = (
      (await req(db.transaction('entries').objectStore('entries').get([big.session_id, other]))) as {
        box: ArrayBuffer
      }
    ).box
    db.close()
    await rewrite(name, 'entries', [big.session_id, first], (v) => ({ ...v, box }))
    const c = await open(name)
    expect(await codeOf(c.messages({ session_id: big.session_id, limit: 10 }))).toBe('session/integrity')
    await c.close()
  })

  it('a cold page of a large session opens that page only: its entries stay sealed in memory until read', async () => {
    const name = dbName()
    const a = await open(name)
    const { session_id } = await a.create({ title: 'long' })
    const texts = Array.from({ length: 900 }, (_, i) => `line ${i}`)
    await Promise.all(texts.map((t) => a.append({ session_id, message: text(t) })))
    await a.flush()
    await a.close()
    const b = await open(name)
    const spy = vi.spyOn(crypto.subtle, 'decrypt')
    const page = await b.messages({ session_id, limit: 20 })
    const opened = spy.mock.calls.length
    spy.mockRestore()
    expect(page.messages.map((m) => (m.message!.content as Array<{ text: string }>)[0].text)).toEqual(
      texts.slice(0, 20),
    )
    // The page's 20 entries and the head's sealed fields; not the 900 (read in two parts).
    expect(opened).toBeLessThanOrEqual(20 + 6)
    // The whole path, live: every entry opened, in order.
    const all = await firstValueFrom(b.messages$({ session_id }).pipe(filter((m) => m.length === 900)))
    expect(all.map((m) => (m.message!.content as Array<{ text: string }>)[0].text)).toEqual(texts)
    await b.close()
  })

  it('a cold live list of a large session opens its path only; a cold tail its page only', async () => {
    const name = dbName()
    const a = await open(name)
    const { session_id, active } = await importBranched(a)
    await a.close()
    const b = await open(name)
    const spy = vi.spyOn(crypto.subtle, 'decrypt')
    const list = await firstValueFrom(b.messages$({ session_id }).pipe(filter((m) => m.length > 0)))
    const listed = spy.mock.calls.length
    spy.mockClear()
    expect(list.map((m) => m.entry_id)).toEqual(active)
    // The path's 20 entries and the head's sealed fields; not the 900.
    expect(listed).toBeLessThanOrEqual(20 + 6)
    await b.close()
    const c = await open(name)
    spy.mockClear()
    const tail = await c.messagesTail({ session_id, limit: 10 })
    const tailed = spy.mock.calls.length
    spy.mockRestore()
    expect(tail.messages.map((m) => m.entry_id)).toEqual(active.slice(-10))
    expect(tailed).toBeLessThanOrEqual(10 + 6)
    await c.close()
  })

  it('the first writes of a store opened cold, entry$ and branch$ open only what they read', async () => {
    const name = dbName()
    const a = await open(name)
    const { session_id, active } = await importBranched(a)
    await a.close()
    const b = await open(name)
    const spy = vi.spyOn(crypto.subtle, 'decrypt')
    /** How many values `run` decrypts. */
    const decrypted = async (run: () => Promise<unknown>): Promise<number> => {
      spy.mockClear()
      await run()
      return spy.mock.calls.length
    }
    // An append, a branch switch and a picked branch read ids and parents: the head's sealed
    // fields at most (read on first use), no entry of the 900.
    expect(
      await decrypted(() => b.append({ session_id, entry_id: 'm_new', message: text('appended') })),
    ).toBeLessThanOrEqual(6)
    expect(await decrypted(() => b.setActiveLeaf({ session_id, entry_id: 'm_880' }))).toBe(0)
    expect(await decrypted(() => b.selectBranch({ session_id, entry_id: 'm_881' }))).toBe(0)
    expect(await decrypted(() => b.setMeta({ session_id, title: 'renamed' }))).toBe(0)
    // An edit opens the message it rewrites.
    const edit = () =>
      b.updateMessage({ session_id, entry_id: 'm_890', content: [{ type: 'text', text: 'edited' }] })
    expect(await decrypted(edit)).toBe(1)
    // entry$ opens its entry alone; branch$ none.
    let entry: unknown
    expect(
      await decrypted(
        async () => (entry = await firstValueFrom(b.entry$(session_id, 'm_100').pipe(filter(Boolean)))),
      ),
    ).toBe(1)
    expect(entry).toMatchObject({ id: 'm_100', message: text('line 100') })
    let branch: unknown
    expect(
      await decrypted(
        async () => (branch = await firstValueFrom(b.branch$(session_id, 'm_881').pipe(filter(Boolean)))),
      ),
    ).toBe(0)
    expect(branch).toEqual({ index: 1, count: 2, siblings: ['m_001', 'm_881'] })
    spy.mockRestore()
    await b.close()
    // What those writes left, read back by another store opened cold.
    const c = await open(name)
    const list = await firstValueFrom(c.messages$({ session_id }).pipe(filter((m) => m.length > 0)))
    expect(list.map((m) => m.entry_id)).toEqual([...active, 'm_new'])
    expect(list.find((m) => m.entry_id === 'm_890')!.message?.content).toEqual([
      { type: 'text', text: 'edited' },
    ])
    expect((await c.get({ session_id }))?.meta.title).toBe('renamed')
    await c.close()
  })

  it('a session read again after another store wrote keeps what it opened: messages$ opens only the new entries; deleteAttachment opens none', async () => {
    const name = dbName()
    const w = await open(name)
    const { session_id } = await importBranched(w)
    const file = await w.putAttachment({
      session_id,
      file: new File(['bytes'], 'f.txt', { type: 'text/plain' }),
    })
    await w.append({
      session_id,
      parent_id: 'm_050',
      message: { ...text('with a file'), content: [file.block] },
    })
    const free = await w.putAttachment({
      session_id,
      file: new File(['free'], 'g.txt', { type: 'text/plain' }),
    })
    await w.setActiveLeaf({ session_id, entry_id: 'm_899' })
    await w.close()
    // Two stores on one database that do not hear each other: `a` learns of `b`'s writes only
    // when its own write finds its head changed and reads the session again (sealed).
    const solo = () =>
      createStore({ storage: indexedDbStorage({ name }), encryption: { passphrase }, multiTab: false })
    const [a, b] = [await solo(), await solo()]
    const spy = vi.spyOn(crypto.subtle, 'decrypt')
    const latest = new BehaviorSubject<readonly MessageItem[]>([])
    const sub = a.messages$({ session_id }).subscribe((v) => latest.next(v))
    const until = (ok: (v: readonly MessageItem[]) => boolean) => firstValueFrom(latest.pipe(filter(ok)))
    await until((v) => v.length === 20)
    let length = 20
    for (let round = 1; round <= 3; round++) {
      const theirs = await b.appendMany({
        session_id,
        messages: [0, 1, 2].map((i) => text(`theirs ${round} ${i}`)),
      })
      spy.mockClear()
      const mine = await a.append({ session_id, message: text(`mine ${round}`) })
      length += 4
      const v = await until((x) => x.length === length)
      expect(v.slice(-4).map((m) => m.entry_id)).toEqual([...theirs.entry_ids, mine.entry_id])
      expect(JSON.stringify(v.slice(-4))).toContain(`theirs ${round} 2`)
      // Their 3 entries and the head's sealed fields; not the path again.
      expect(spy.mock.calls.length).toBeLessThanOrEqual(3 + 6)
    }
    sub.unsubscribe()
    // The in-use check reads references held clear: nothing of the 900 entries is opened.
    spy.mockClear()
    expect(
      await codeOf(a.deleteAttachment({ session_id, attachment_id: file.attachment.attachment_id })),
    ).toBe('session/attachment_in_use')
    expect(await a.deleteAttachment({ session_id, attachment_id: free.attachment.attachment_id })).toEqual({
      deleted: true,
    })
    expect(spy.mock.calls.length).toBe(0)
    spy.mockRestore()
    await Promise.all([a.close(), b.close()])
  })

  it('encrypts a clear database in place, resuming after a stop midway; nothing left clear', async () => {
    const name = dbName()
    const clear = await createStore({ storage: indexedDbStorage({ name }) })
    const ids: Array<{ session_id: string; entry_id: string; attachment_id: string }> = []
    for (let i = 0; i < 3; i++) {
      const { session_id } = await clear.create({ title: `title ${i} ${MARK}` })
      const { entry_id } = await clear.append({ session_id, message: text(`hello ${i} ${MARK}`) })
      const { attachment } = await clear.putAttachment({
        session_id,
        name: `${MARK}.txt`,
        file: new Blob([`bytes ${i} ${MARK}`], { type: 'text/plain' }),
      })
      ids.push({ session_id, entry_id, attachment_id: attachment.attachment_id })
    }
    await clear.close()
    expect(await rawText(name)).toContain(MARK)
    const stop = new Error('stopped')
    await expect(
      createStore({
        storage: indexedDbStorage({ name }),
        encryption: {
          passphrase,
          onEncryptProgress: (n) => {
            if (n === 1) throw stop
          },
        },
      }),
    ).rejects.toBe(stop)
    const midway = await rawText(name)
    expect(midway).toContain(MARK)
    expect(midway.split('\n').filter((l) => l.startsWith('sessions ') && l.includes(MARK))).toHaveLength(2)

    const store = await open(name)
    expect(await rawText(name)).not.toContain(MARK)
    for (const [i, { session_id, entry_id, attachment_id }] of ids.entries()) {
      expect((await store.get({ session_id }))!.meta.title).toBe(`title ${i} ${MARK}`)
      expect(JSON.stringify(await store.getMessage({ session_id, entry_id }))).toContain(`hello ${i} ${MARK}`)
      expect(await (await store.getAttachmentBlob(session_id, attachment_id))!.text()).toBe(
        `bytes ${i} ${MARK}`,
      )
    }
    // Writes after the job go on as usual.
    await store.append({ session_id: ids[0].session_id, message: text(`after ${MARK}`) })
    await store.close()
    expect(await rawText(name)).not.toContain(MARK)
  })

  it('encrypting in place deletes the search index written while the store was clear', async () => {
    const name = dbName()
    const clear = await createStore({ storage: indexedDbStorage({ name }) })
    const { session_id } = await clear.create({ title: 't' })
    await clear.append({ session_id, message: text(`hello ${MARK}`) })
    const search = await enableSearch(clear)
    expect((await search.query({ query: MARK.toLowerCase() })).hits).toHaveLength(1)
    await search.close()
    await clear.close()
    const names = async (): Promise<string[]> => (await indexedDB.databases()).map((d) => d.name ?? '')
    expect(await names()).toContain(`${name}:search`)
    expect(await rawText(`${name}:search`)).toContain(MARK.toLowerCase())

    const store = await open(name)
    expect(await names()).not.toContain(`${name}:search`)
    await store.close()
  })

  it('a wrong passphrase decrypts nothing and writes nothing', async () => {
    const name = dbName()
    const a = await open(name)
    await a.create({ title: `t ${MARK}` })
    await a.close()
    const before = await rawText(name)
    expect(await codeOf(open(name, 'not it'))).toBe('session/wrong_passphrase')
    expect(await rawText(name)).toBe(before)
  })

  it('lock, unlock and a passphrase change reach the other tab', async () => {
    const name = dbName()
    const a = await open(name)
    const b = await open(name)
    const { session_id } = await a.create({ title: `t ${MARK}` })
    await a.flush()
    expect((await b.get({ session_id }))!.meta.title).toBe(`t ${MARK}`)

    const bLocked = firstValueFrom(b.locked$.pipe(filter(Boolean)))
    await a.lock()
    await bLocked
    // The other tab let go of what it held in clear.
    expect([...hostOf(b).heads()]).toEqual([])
    expect(hostOf(b).keyring).toBeNull()
    expect(await codeOf(b.get({ session_id }))).toBe('session/locked')
    expect(await codeOf(a.get({ session_id }))).toBe('session/locked')

    const bOpen = firstValueFrom(b.locked$.pipe(filter((l) => !l)))
    await a.unlock(passphrase)
    await bOpen
    expect((await b.get({ session_id }))!.meta.title).toBe(`t ${MARK}`)
    // Commits relay between the tabs again.
    const { entry_id } = await a.append({ session_id, message: text('after unlock') })
    await firstValueFrom(
      b.messages$({ session_id }).pipe(filter((items) => items.some((i) => i.entry_id === entry_id))),
    )

    await a.changePassphrase(passphrase, 'a new one')
    // The other tab keeps working, and writes under the same keys.
    await b.setMeta({ session_id, title: `renamed ${MARK}` })
    await b.flush()
    await a.close()
    await b.close()
    expect(await codeOf(open(name))).toBe('session/wrong_passphrase')
    const c = await open(name, 'a new one')
    expect((await c.get({ session_id }))!.meta.title).toBe(`renamed ${MARK}`)
    await c.close()
    expect(await rawText(name)).not.toContain(MARK)
  })

  it('locks itself in every tab after lockAfter ms without use in any tab; calls and touch() in one tab keep both open', async () => {
    const L = 1000
    const name = dbName()
    const idle = (s: string) =>
      createStore({ storage: indexedDbStorage({ name }), encryption: { passphrase: s, lockAfter: L } })
    expect(
      await codeOf(createStore({ storage: memoryStorage(), encryption: { passphrase, lockAfter: 5 } })),
    ).toBe('session/invalid_request')
    const a = await idle(passphrase)
    const b = await idle(passphrase)
    const { session_id } = await a.create({ title: `t ${MARK}` })
    await a.flush()
    const lockedAt = (s: Store) => firstValueFrom(s.locked$.pipe(filter(Boolean))).then(() => Date.now())
    const aLocked = lockedAt(a)
    const bLocked = lockedAt(b)
    // A is left alone; B is used for 2 L with calls only, then 2 L with touch() only, a use every
    // L / 10. Were either not counted, or B's use not told to A, a lock would come inside a phase.
    const uses: number[] = [Date.now()]
    const use = async (until: number, how: () => Promise<unknown> | void) => {
      while (Date.now() < until) {
        // Taken before the use: the store counts from no earlier than this.
        uses.push(Date.now())
        await how()
        await new Promise((r) => setTimeout(r, L / 10))
      }
    }
    const start = Date.now()
    await use(start + 2 * L, () => b.get({ session_id }))
    await use(start + 4 * L, () => b.touch())
    const lastUse = uses.at(-1)!
    const [atA, atB] = await Promise.all([aLocked, bLocked])
    // Locked only once L ms passed without use, and not before the uses ended.
    for (const at of [atA, atB]) expect(at - lastUse).toBeGreaterThanOrEqual(L)
    // No gap between uses as long as L (a stalled machine would void the check above).
    expect(Math.max(...uses.slice(1).map((t, i) => t - uses[i]!))).toBeLessThan(L)

    // As store.lock(): plaintext dropped in both, every call refused, unlock in either opens both.
    expect([...hostOf(a).heads()]).toEqual([])
    expect([...hostOf(b).heads()]).toEqual([])
    expect(hostOf(a).keyring).toBeNull()
    expect(await codeOf(a.get({ session_id }))).toBe('session/locked')
    expect(await codeOf(b.get({ session_id }))).toBe('session/locked')
    const aOpen = firstValueFrom(a.locked$.pipe(filter((l) => !l)))
    const unlocking = Date.now()
    await b.unlock(passphrase)
    await aOpen
    expect((await a.get({ session_id }))!.meta.title).toBe(`t ${MARK}`)
    // The count starts again on unlock: left alone, both lock again.
    const again = await Promise.all([lockedAt(a), lockedAt(b)])
    for (const at of again) expect(at - unlocking).toBeGreaterThanOrEqual(L)
    expect(await codeOf(a.get({ session_id }))).toBe('session/locked')
    await a.close()
    await b.close()
    expect(await rawText(name)).not.toContain(MARK)
  })

  it('imports a session exported from a clear store, sealed, and exports it back whole', async () => {
    const clear = await createStore({ storage: memoryStorage(), multiTab: false })
    const { session_id } = await clear.create({ title: `imported ${MARK}` })
    const { entry_id } = await clear.append({ session_id, message: text(`old ${MARK}`) })
    const meta = (await clear.get({ session_id }))!.meta
    const entries = [(await clear.getMessage({ session_id, entry_id }))!.entry]
    const name = dbName()
    const a = await open(name)
    await a.importSession({ meta, entries, active_leaf: entry_id })
    expect([(await a.getMessage({ session_id, entry_id }))!.entry]).toEqual(entries)
    expect((await a.get({ session_id }))!.meta.title).toBe(`imported ${MARK}`)
    await a.close()
    expect(await rawText(name)).not.toContain(MARK)
  })
})

describe('search over an encrypted store (Chromium)', () => {
  it('finds the marker from an index kept in memory only: no search database, nothing at rest; a lock ends it', async () => {
    const { enableSearch } = await import('../../src/search/index.js')
    const name = dbName()
    const a = await open(name)
    const { session_id } = await a.create({ title: 'searched' })
    await a.append({ session_id, message: text(`needle ${MARK}`) })
    const search = await enableSearch(a)
    const found = await search.query({ query: MARK.toLowerCase() })
    expect(found.hits.map((h) => h.session_id)).toEqual([session_id])
    await search.flush()
    const dbs = (await indexedDB.databases()).map((d) => d.name)
    expect(dbs).toContain(name)
    expect(dbs.filter((d) => d?.startsWith(name) && d !== name)).toEqual([])
    expect(await codeOf(enableSearch(a, { persist: true }))).toBe('session/invalid_request')
    await a.lock()
    expect(await codeOf(search.query({ query: 'needle' }))).toBe('session/locked')
    await a.unlock(passphrase)
    const again = await enableSearch(a)
    expect((await again.query({ query: 'needle' })).hits.length).toBe(1)
    again.close()
    await a.close()
    expect(await rawText(name)).not.toContain(MARK)
  })
})
