import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, SessionError } from '../../src/index.js'
import { CHUNK_BYTES } from '../../src/crypto/attachment-chunks.js'
import { wholeRefusing } from './whole-refused.js'

// An encrypted store reads an attachment's sealed Blob a chunk at a time (each chunk opening
// while the rest is read), never whole; what it answers is byte for byte what was put, and a
// chunk altered at rest leaves no answer at all.

const passphrase = 'correct horse battery staple'
const MB = 1024 * 1024

const patterned = (n: number): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) out[i] = (i * 31 + (i >> 8)) & 0xff
  return out
}

/** Where `got` first differs from `want`, or 'same' (a deep equality of megabytes is slow). */
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

describe('an encrypted read of attachment bytes', () => {
  it('reads the sealed Blob chunk by chunk, never whole, and answers exactly the bytes put', async () => {
    const inner = memoryStorage()
    const store = await createStore({
      storage: wholeRefusing(inner),
      multiTab: false,
      encryption: { passphrase },
    })
    const { session_id } = await store.create({})
    const sizes = [0, 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 2 * CHUNK_BYTES, MB, 3 * MB]
    for (const size of sizes) {
      const bytes = patterned(size)
      const { attachment } = await store.putAttachment({ session_id, name: 'a.bin', file: new Blob([bytes]) })
      const blob = await store.getAttachmentBlob(session_id, attachment.attachment_id)
      expect(blob, `size ${size}`).toBeInstanceOf(Blob)
      expect(blob!.size, `size ${size}`).toBe(size)
      expect(diff(await blob!.arrayBuffer(), bytes), `size ${size}`).toBe('same')
      expect(
        diff(await blob!.slice(size >> 1).arrayBuffer(), bytes.subarray(size >> 1)),
        `size ${size}`,
      ).toBe('same')
    }
    await store.close()
  })

  it('refuses a middle chunk altered at rest with session/integrity and answers nothing', async () => {
    const inner = memoryStorage()
    const store = await createStore({
      storage: wholeRefusing(inner),
      multiTab: false,
      encryption: { passphrase },
    })
    const { session_id } = await store.create({})
    const { attachment } = await store.putAttachment({
      session_id,
      name: 'a.bin',
      file: new Blob([patterned(3 * MB)]),
    })
    await store.flush()
    const id = attachment.attachment_id
    const raw = new Uint8Array(await (await inner.attachmentBytes!(session_id, id))!.arrayBuffer())
    // One byte inside the second chunk's ciphertext.
    const at = 1 + 4 + new DataView(raw.buffer).getUint32(1) + 4 + 100
    raw[at] ^= 1
    await inner.transact(async () => ({
      deleted: new Set<string>(),
      heads: new Map(),
      entries: new Map(),
      side: [],
      blobs: [{ op: 'put', session_id, attachment_id: id, bytes: new Blob([raw]) }],
    }))
    expect(await codeOf(store.getAttachmentBlob(session_id, id))).toBe('session/integrity')
    expect(await codeOf(store.getAttachment({ session_id, attachment_id: id }))).toBe('session/integrity')
    // The same bytes restored open again: it was the altered chunk that was refused.
    raw[at] ^= 1
    await inner.transact(async () => ({
      deleted: new Set<string>(),
      heads: new Map(),
      entries: new Map(),
      side: [],
      blobs: [{ op: 'put', session_id, attachment_id: id, bytes: new Blob([raw]) }],
    }))
    expect(
      diff(await (await store.getAttachmentBlob(session_id, id))!.arrayBuffer(), patterned(3 * MB)),
    ).toBe('same')
    await store.close()
  })
})
