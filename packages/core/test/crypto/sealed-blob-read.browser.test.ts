import { describe, expect, it } from 'vitest'
import { createStore, indexedDbStorage, SessionError, type Store } from '../../src/index.js'
import { CHUNK_BYTES } from '../../src/crypto/attachment-chunks.js'
import { rawDb, req } from '../../../../test/support/raw-idb.js'
import { wholeRefusing } from './whole-refused.js'

// In Chromium over real IndexedDB: an encrypted store reads an attachment's sealed Blob (the
// database's own, on disk) a chunk at a time, never whole, by a store opened cold; it answers
// exactly the bytes put, and a middle chunk altered on disk leaves no answer.

const passphrase = 'correct horse battery staple'
const MB = 1024 * 1024
let n = 0
const dbName = (): string => `sealed-blob-read-${Date.now()}-${n++}`

const open = (name: string, refuseWhole = true): Promise<Store> =>
  createStore({
    storage: refuseWhole ? wholeRefusing(indexedDbStorage({ name })) : indexedDbStorage({ name }),
    multiTab: false,
    encryption: { passphrase },
  })

const random = (size: number): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(size)
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(size, i + 65536)))
  return out
}

/** Where `got` first differs from `want`, or 'same'. */
const diff = (got: ArrayBuffer, want: Uint8Array): string => {
  const v = new Uint8Array(got)
  if (v.length !== want.length) return `length ${v.length}`
  for (let i = 0; i < v.length; i++) if (v[i] !== want[i]) return `byte ${i}`
  return 'same'
}

const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p
  } catch (e) {
    return e instanceof SessionError ? e.code : String(e)
  }
  return 'resolved'
}

describe('an encrypted read of attachment bytes over IndexedDB (Chromium)', () => {
  it('reads the sealed Blob chunk by chunk, never whole, and answers exactly the bytes put', async () => {
    const name = dbName()
    const a = await open(name, false)
    const { session_id } = await a.create({})
    const sizes = [0, 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, MB, 3 * MB]
    const put: Array<{ id: string; bytes: Uint8Array }> = []
    for (const size of sizes) {
      const bytes = random(size)
      const { attachment } = await a.putAttachment({ session_id, name: 'a.bin', file: new Blob([bytes]) })
      put.push({ id: attachment.attachment_id, bytes })
    }
    await a.close()
    const b = await open(name)
    for (const { id, bytes } of put) {
      const blob = await b.getAttachmentBlob(session_id, id)
      expect(blob, `size ${bytes.length}`).toBeInstanceOf(Blob)
      expect(diff(await blob!.arrayBuffer(), bytes), `size ${bytes.length}`).toBe('same')
      const url = URL.createObjectURL(blob!)
      try {
        expect(diff(await (await fetch(url)).arrayBuffer(), bytes), `size ${bytes.length}`).toBe('same')
      } finally {
        URL.revokeObjectURL(url)
      }
    }
    await b.close()
  })

  it('refuses a middle chunk altered on disk with session/integrity and answers nothing', async () => {
    const name = dbName()
    const a = await open(name, false)
    const { session_id } = await a.create({})
    const bytes = random(3 * MB)
    const { attachment } = await a.putAttachment({ session_id, name: 'a.bin', file: new Blob([bytes]) })
    const id = attachment.attachment_id
    await a.close()
    const db = await rawDb(name)
    const stored = (await req(
      db.transaction('attachments').objectStore('attachments').get([session_id, id]),
    )) as Blob
    const raw = new Uint8Array(await stored.arrayBuffer())
    // One byte inside the second chunk's ciphertext.
    raw[1 + 4 + new DataView(raw.buffer).getUint32(1) + 4 + 100] ^= 1
    await req(
      db
        .transaction('attachments', 'readwrite')
        .objectStore('attachments')
        .put(new Blob([raw]), [session_id, id]),
    )
    db.close()
    const b = await open(name)
    expect(await codeOf(b.getAttachmentBlob(session_id, id))).toBe('session/integrity')
    expect(await codeOf(b.getAttachment({ session_id, attachment_id: id }))).toBe('session/integrity')
    await b.close()
  })
})
