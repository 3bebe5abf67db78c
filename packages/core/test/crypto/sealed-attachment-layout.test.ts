import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, SessionError, type Storage, type Store } from '../../src/index.js'
import { Keyring, parseKeyring } from '../../src/crypto/keyring.js'
import { openAttachmentWhole, sealAttachmentBytes } from '../../src/crypto/attachment-seal.js'
import { CHUNKED, CHUNK_BYTES } from '../../src/crypto/attachment-chunks.js'
import { sealBytes } from '../../src/crypto/envelope.js'
import { KEYRING_KEY } from '../../src/storage/sealed/encryption.js'

// An encrypted store keeps attachment bytes at rest in the chunked layout (one envelope per
// chunk, opened all at once into the pieces of the Blob a read returns), reads attachments
// sealed in the single envelope before it, and refuses chunks cut, dropped, reordered or
// flipped on disk.

const passphrase = 'correct horse battery staple'

const patterned = (n: number): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) out[i] = (i * 31 + (i >> 8)) & 0xff
  return out
}

/** A Blob that can only be streamed: reading it whole throws. */
class StreamOnly extends Blob {
  override arrayBuffer(): Promise<ArrayBuffer> {
    throw new Error('read whole')
  }
  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    throw new Error('read whole')
  }
}

/** The framed chunks of the chunked layout (each: 4-byte length and envelope). */
function frames(sealed: Uint8Array): Uint8Array[] {
  const view = new DataView(sealed.buffer, sealed.byteOffset, sealed.byteLength)
  const out: Uint8Array[] = []
  for (let at = 1; at < sealed.length;) {
    const size = view.getUint32(at)
    out.push(sealed.subarray(at, at + 4 + size))
    at += 4 + size
  }
  return out
}
const layout = (parts: Uint8Array[]): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(1 + parts.reduce((n, p) => n + p.length, 0))
  out[0] = CHUNKED
  let at = 1
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const code = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p
  } catch (e) {
    return e instanceof SessionError ? e.code : String(e)
  }
  return 'resolved'
}

async function stored(inner: Storage, session_id: string, attachment_id: string): Promise<Uint8Array> {
  return new Uint8Array(await (await inner.attachmentBytes!(session_id, attachment_id))!.arrayBuffer())
}

async function rewriteBytes(inner: Storage, session_id: string, attachment_id: string, bytes: Uint8Array) {
  await inner.transact(async () => ({
    deleted: new Set<string>(),
    heads: new Map(),
    entries: new Map(),
    side: [],
    blobs: [{ op: 'put', session_id, attachment_id, bytes: new Blob([bytes as Uint8Array<ArrayBuffer>]) }],
  }))
}

async function withAttachment(size: number): Promise<{
  inner: Storage
  store: Store
  session_id: string
  attachment_id: string
  bytes: Uint8Array<ArrayBuffer>
}> {
  const inner = memoryStorage()
  const store = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
  const { session_id } = await store.create({})
  const bytes = patterned(size)
  // Streamed as it is sealed: a put never reads the file whole for sealing (only to hash it).
  const file = new StreamOnly([bytes])
  file.arrayBuffer = () => new Blob([bytes]).arrayBuffer()
  const { attachment } = await store.putAttachment({ session_id, name: 'a.bin', file })
  await store.flush()
  return { inner, store, session_id, attachment_id: attachment.attachment_id, bytes }
}

describe('attachment bytes at rest on an encrypted store', () => {
  it('are kept in chunks of 2^18-1 bytes, one envelope each, and read back whole', async () => {
    for (const size of [0, 1, CHUNK_BYTES, CHUNK_BYTES + 1, 2 * CHUNK_BYTES + 5000]) {
      const { inner, store, session_id, attachment_id, bytes } = await withAttachment(size)
      const raw = await stored(inner, session_id, attachment_id)
      expect(raw[0], `size ${size}`).toBe(CHUNKED)
      expect(frames(raw), `size ${size}`).toHaveLength(Math.max(1, Math.ceil(size / CHUNK_BYTES)))
      const blob = await store.getAttachmentBlob(session_id, attachment_id)
      expect(new Uint8Array(await blob!.arrayBuffer()), `size ${size}`).toEqual(bytes)
      const got = await store.getAttachment({ session_id, attachment_id })
      expect(got?.data, `size ${size}`).toBe(Buffer.from(bytes).toString('base64'))
      await store.close()
    }
  })

  it('are read as a Blob of the attachment type whose every read (whole, sliced, streamed, again) has its bytes', async () => {
    const { store, session_id, attachment_id, bytes } = await withAttachment(CHUNK_BYTES + 3)
    const read = async () => (await store.getAttachmentBlob(session_id, attachment_id))!
    const blob = await read()
    expect(blob.type).toBe('application/octet-stream')
    expect(blob.size).toBe(bytes.length)
    const first = new Uint8Array(await blob.arrayBuffer())
    first[0] ^= 1 // the caller's own copy: the Blob's bytes do not change with it
    expect(new Uint8Array(await blob.arrayBuffer())).toEqual(bytes)
    expect(new Uint8Array(await blob.slice(5, 9).arrayBuffer())).toEqual(bytes.subarray(5, 9))
    expect(new Uint8Array(await new Response((await read()).stream()).arrayBuffer())).toEqual(bytes)
    expect(await (await read()).text()).toBe(new TextDecoder().decode(bytes))
    await store.close()
  })

  it('sealed in the single envelope before the chunked layout still open', async () => {
    const { inner, store, session_id, attachment_id } = await withAttachment(10)
    await store.close()
    const kv = await inner.sideRecords!('kv')
    const ring = await Keyring.open(parseKeyring(kv.find((r) => r.key === KEYRING_KEY)!.value), {
      passphrase,
    })
    const old = patterned(CHUNK_BYTES + 77)
    await rewriteBytes(
      inner,
      session_id,
      attachment_id,
      await sealAttachmentBytes(ring, session_id, attachment_id, old),
    )
    const again = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
    expect(
      new Uint8Array(await (await again.getAttachmentBlob(session_id, attachment_id))!.arrayBuffer()),
    ).toEqual(old)
    await again.close()
  })

  it('refuses chunks cut off, dropped, reordered, repeated or flipped on disk with session/integrity', async () => {
    const { inner, store, session_id, attachment_id } = await withAttachment(2 * CHUNK_BYTES + 5000)
    const raw = await stored(inner, session_id, attachment_id)
    const [a, b, c] = frames(raw)
    const flipped = raw.slice()
    flipped[raw.length - 20] ^= 1
    // Chunks open all at once, the last first, each copied into the answer as it opens: a
    // refused chunk anywhere, whenever it settles, leaves no answer.
    const flippedAt = (frame: number): Uint8Array => {
      const out = raw.slice()
      out[
        1 +
          frames(raw)
            .slice(0, frame)
            .reduce((n, f) => n + f.length, 0) +
          100
      ] ^= 1
      return out
    }
    const other = await store.putAttachment({
      session_id,
      name: 'b.bin',
      file: new Blob([patterned(2 * CHUNK_BYTES + 5000)]),
    })
    await store.flush()
    const [, foreign] = frames(await stored(inner, session_id, other.attachment.attachment_id))
    const cases: Record<string, Uint8Array> = {
      'cut off': raw.subarray(0, raw.length - 100),
      'last dropped': layout([a, b]),
      'middle dropped': layout([a, c]),
      reordered: layout([b, a, c]),
      'added after the last': layout([a, b, c, c]),
      flipped,
      'first flipped': flippedAt(0),
      'middle flipped': flippedAt(1),
      'middle from another attachment': layout([a, foreign!, c]),
    }
    for (const [name, bytes] of Object.entries(cases)) {
      await rewriteBytes(inner, session_id, attachment_id, bytes)
      expect(await code(store.getAttachmentBlob(session_id, attachment_id)), name).toBe('session/integrity')
    }
    await rewriteBytes(inner, session_id, attachment_id, raw)
    expect(await code(store.getAttachmentBlob(session_id, attachment_id))).toBe('resolved')
    await store.close()
  })

  it('open into the buffer made ready for the size the metadata gives, and into their own when it has another length', async () => {
    const size = 2 * CHUNK_BYTES + 7
    const { inner, store, session_id, attachment_id, bytes } = await withAttachment(size)
    await store.close()
    const kv = await inner.sideRecords!('kv')
    const ring = await Keyring.open(parseKeyring(kv.find((r) => r.key === KEYRING_KEY)!.value), {
      passphrase,
    })
    const sealed = await stored(inner, session_id, attachment_id)
    const ready = new Uint8Array(size)
    const opened = await openAttachmentWhole(ring, session_id, attachment_id, sealed, ready)
    expect(opened).toBe(ready)
    expect(opened).toEqual(bytes)
    for (const other of [size - 1, size + 1, 0]) {
      const wrong = new Uint8Array(other)
      const got = await openAttachmentWhole(ring, session_id, attachment_id, sealed, wrong)
      expect(got, `ready of ${other}`).not.toBe(wrong)
      expect(got, `ready of ${other}`).toEqual(bytes)
      expect(
        wrong.every((b) => b === 0),
        `ready of ${other} untouched`,
      ).toBe(true)
    }
  })

  it('open chunks of other lengths than this writer seals (any sealer of the layout) to the same bytes', async () => {
    const { inner, store, session_id, attachment_id } = await withAttachment(10)
    await store.close()
    const kv = await inner.sideRecords!('kv')
    const ring = await Keyring.open(parseKeyring(kv.find((r) => r.key === KEYRING_KEY)!.value), {
      passphrase,
    })
    const plain = patterned(3 * CHUNK_BYTES + 10)
    // The chunk lengths a reader must not assume: short, full, longer than full, empty last.
    for (const lengths of [
      [1000, CHUNK_BYTES, CHUNK_BYTES + 9, CHUNK_BYTES - 999, 0],
      [CHUNK_BYTES, CHUNK_BYTES, 5, CHUNK_BYTES + 5],
    ]) {
      let at = 0
      const sealed: Uint8Array[] = []
      for (const [index, n] of lengths.entries()) {
        const last = index === lengths.length - 1
        const piece = last ? plain.subarray(at) : plain.subarray(at, at + n)
        at += piece.length
        const envelope = await sealBytes(ring, piece, {
          session_id,
          entry_id: attachment_id,
          revision: 0,
          field: 'attachment.chunk',
          bound: [index, last],
        })
        const frame = new Uint8Array(4 + envelope.length)
        new DataView(frame.buffer).setUint32(0, envelope.length)
        frame.set(envelope, 4)
        sealed.push(frame)
      }
      await rewriteBytes(inner, session_id, attachment_id, layout(sealed))
      const again = await createStore({ storage: inner, multiTab: false, encryption: { passphrase } })
      const read = await (await again.getAttachmentBlob(session_id, attachment_id))!.arrayBuffer()
      expect(read.byteLength, lengths.join()).toBe(plain.length)
      expect(new Uint8Array(read), lengths.join()).toEqual(plain)
      await again.close()
    }
  })
})
