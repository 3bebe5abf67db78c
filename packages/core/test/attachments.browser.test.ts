import { describe, expect, it, vi } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { createDatabase, idbStores } from './idb-stores.js'
import { noteLimit } from '../../../test/support/engine-limit.js'

const { dbName, storeOn } = idbStores('attachments-browser')
const bytesOf = async (b: Blob): Promise<number[]> => [...new Uint8Array(await b.arrayBuffer())]

const rawDb = (name: string): Promise<IDBDatabase> =>
  new Promise((resolve, reject) => {
    const r = indexedDB.open(name)
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
const all = (db: IDBDatabase, store: string): Promise<unknown[]> =>
  new Promise((resolve, reject) => {
    const r = db.transaction(store).objectStore(store).getAll()
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })

/**
 * Whether this engine refuses a Blob put into an object store (WebKit's ephemeral sessions:
 * private browsing, automation), asked here in a scratch database of the test's own.
 */
async function refusesBlobs(): Promise<boolean> {
  const name = `blob-probe-${Date.now()}`
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const r = indexedDB.open(name, 1)
    r.onupgradeneeded = () => r.result.createObjectStore('b')
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
  const refused = await new Promise<boolean>((resolve) => {
    const tx = db.transaction('b', 'readwrite')
    tx.objectStore('b').put(new Blob(['x']), 1)
    tx.oncomplete = () => resolve(false)
    tx.onabort = () => resolve(true)
  })
  db.close()
  indexedDB.deleteDatabase(name)
  return refused
}
/** WebKit outside Chromium: its automation session (this run) is ephemeral, so refuses Blobs. */
const webkitAutomation =
  /AppleWebKit/.test(navigator.userAgent) && !/Chrome|Chromium|Firefox/.test(navigator.userAgent)

describe('attachments over real IndexedDB', () => {
  it('where the engine refuses Blobs (WebKit ephemeral), the bytes are kept with their type and read back as the same Blob', async (ctx) => {
    expect(await refusesBlobs()).toBe(webkitAutomation)
    if (webkitAutomation)
      noteLimit(
        ctx,
        'IndexedDB refuses Blobs in the ephemeral (automation, private) session: attachment bytes are kept as an ArrayBuffer with their type',
      )
    const name = dbName()
    const store = await storeOn(name)
    const { session_id } = await store.create({})
    const bytes = Array.from({ length: 3000 }, (_, i) => (i * 7) & 255)
    const file = new File([new Uint8Array(bytes)], 'scan.pdf', { type: 'application/pdf' })
    const a = await store.putAttachment({ session_id, file })
    const b = await store.putAttachment({
      session_id,
      name: 'b.txt',
      mime: 'text/plain;charset=utf-8',
      data: 'aGk=',
    })
    await store.flush()
    const db = await rawDb(name)
    try {
      const records = await all(db, 'attachments')
      expect(records).toHaveLength(2)
      for (const r of records) {
        if (webkitAutomation)
          expect(r).toMatchObject({ bytes: expect.any(ArrayBuffer), type: expect.any(String) })
        else expect(r).toBeInstanceOf(Blob)
      }
    } finally {
      db.close()
    }
    // A store opened afresh (a reload) reads them back as Blobs, byte for byte, type for type.
    await store.close()
    const again = await storeOn(name)
    const pdf = (await again.getAttachmentBlob(session_id, a.attachment.attachment_id))!
    expect(pdf).toBeInstanceOf(Blob)
    expect(pdf.type).toBe('application/pdf')
    expect(await bytesOf(pdf)).toStrictEqual(bytes)
    const txt = (await again.getAttachmentBlob(session_id, b.attachment.attachment_id))!
    expect([txt.type, await txt.text()]).toStrictEqual(['text/plain;charset=utf-8', 'hi'])
  })

  it('a File is stored in its own object store (as a Blob where the engine takes Blobs), never inside a head or an entry', async () => {
    const name = dbName()
    const store = await storeOn(name)
    const { session_id } = await store.create({})
    const file = new File([new Uint8Array([137, 80, 78, 71, 1, 2, 3])], 'shot.png', { type: 'image/png' })
    const { attachment, block } = await store.putAttachment({ session_id, file })
    expect(attachment).toMatchObject({ name: 'shot.png', mime: 'image/png', size: 7, session_id })
    expect(attachment.attachment_id).toMatch(/^a_/)
    await store.append({ session_id, message: { role: 'user', content: [block], timestamp: 0 } })
    await store.flush()
    const db = await rawDb(name)
    try {
      const blobs = await all(db, 'attachments')
      expect(blobs).toHaveLength(1)
      const stored = blobs[0] as Blob | { bytes: ArrayBuffer; type: string }
      if (webkitAutomation) expect(stored).toMatchObject({ type: 'image/png' })
      else expect(stored).toBeInstanceOf(Blob)
      expect(await bytesOf(stored instanceof Blob ? stored : new Blob([stored.bytes]))).toStrictEqual([
        137, 80, 78, 71, 1, 2, 3,
      ])
      const heads = JSON.stringify(await all(db, 'sessions'))
      const entries = JSON.stringify(await all(db, 'entries'))
      for (const text of [heads, entries]) expect(text).not.toContain('iVBORw')
      expect(heads).toContain(attachment.sha256)
    } finally {
      db.close()
    }
  })

  it('bytes are read on demand: getAttachmentBlob, and an object URL shared by holders and revoked by the last', async () => {
    const store = await storeOn(dbName())
    const { session_id } = await store.create({})
    const { attachment } = await store.putAttachment({
      session_id,
      name: 'a.txt',
      mime: 'text/plain',
      data: 'aGVsbG8=',
    })
    const blob = await store.getAttachmentBlob(session_id, attachment.attachment_id)
    expect(blob!.type).toBe('text/plain')
    expect(await blob!.text()).toBe('hello')
    expect(await store.getAttachmentBlob(session_id, 'a_404')).toBeNull()
    expect(await store.attachmentUrl(session_id, 'a_404')).toBeNull()
    const url = await store.attachmentUrl(session_id, attachment.attachment_id)
    expect(url).toMatch(/^blob:/)
    expect(await store.attachmentUrl(session_id, attachment.attachment_id)).toBe(url)
    expect(await (await fetch(url!)).text()).toBe('hello')
    store.releaseAttachmentUrl(session_id, attachment.attachment_id)
    expect(await (await fetch(url!)).text()).toBe('hello')
    store.releaseAttachmentUrl(session_id, attachment.attachment_id)
    await vi.waitFor(() => expect(fetch(url!)).rejects.toThrow())
  })

  it('reopening a session with many images keeps their bytes out of memory', async () => {
    const name = dbName()
    let store = await storeOn(name)
    const { session_id } = await store.create({})
    const big = new Uint8Array(64 * 1024).fill(7)
    for (let i = 0; i < 20; i++) {
      const { attachment } = await store.putAttachment({
        session_id,
        file: new File([big], `img${i}.png`, { type: 'image/png' }),
      })
      await store.append({
        session_id,
        message: {
          role: 'user',
          content: [{ type: 'image', mime: 'image/png', data: '', attachment_id: attachment.attachment_id }],
          timestamp: 0,
        },
      })
    }
    await store.close()
    store = await storeOn(name)
    const page = await store.messagesTail({ session_id, limit: 50 })
    expect(page.messages).toHaveLength(20)
    // Everything the store holds for the session (head, entries, attachment list) is small.
    const held = store.engine.state.sessions.get(session_id)!
    const size = JSON.stringify({ head: held.head, entries: [...held.entries!.values()] }).length
    expect(size).toBeLessThan(20 * 1024)
    expect((await store.listAttachments({ session_id })).attachments).toHaveLength(20)
    const [first] = (await store.listAttachments({ session_id })).attachments
    expect((await store.getAttachmentBlob(session_id, first.attachment_id))!.size).toBe(big.length)
  })

  it('a draft saved in one tab shows in the other, and so does the attachment list', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const { session_id } = await a.create({})
    await b.flush()
    const draftInB = firstValueFrom(
      b.draft$(session_id).pipe(filter((d) => d?.draft === 'typed in A' && d.attachments.length === 1)),
    )
    const listInB = firstValueFrom(b.attachments$(session_id).pipe(filter((l) => l?.length === 1)))
    const { attachment } = await a.putAttachment({ session_id, name: 'chip.txt', data: 'aGk=' })
    await a.setDraft({ session_id, draft: 'typed in A', attachment_ids: [attachment.attachment_id] })
    expect((await draftInB)!.attachments[0].name).toBe('chip.txt')
    expect((await listInB)![0].attachment_id).toBe(attachment.attachment_id)
    // And B reads the bytes A wrote.
    expect(await (await b.getAttachmentBlob(session_id, attachment.attachment_id))!.text()).toBe('hi')
  })

  it('opening a database of the previous schema adds the attachment store and keeps everything', async () => {
    const name = dbName()
    // The version-1 schema, with one session in it, as an older build left it.
    await createDatabase(name, 1, (db, tx) => {
      db.createObjectStore('sessions')
      db.createObjectStore('entries')
      db.createObjectStore('outbox', { autoIncrement: true })
      db.createObjectStore('kv')
      const meta = {
        session_id: 's_old',
        title: 'from v1',
        description: '',
        status: 'idle',
        kind: 'user',
        created_at: 1,
        updated_at: 1,
        message_count: 0,
      }
      tx.objectStore('sessions').put({ meta, leaf: null, v: 1 }, 's_old')
    })
    const store = await storeOn(name)
    expect((await store.get({ session_id: 's_old' }))!.meta.title).toBe('from v1')
    const { attachment } = await store.putAttachment({ session_id: 's_old', name: 'n.txt', data: 'aGk=' })
    expect(await (await store.getAttachmentBlob('s_old', attachment.attachment_id))!.text()).toBe('hi')
  })
})
