import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { memoryStorage, type AttachmentMeta } from '@colloquy/core'
import { Keyring } from '@colloquy/core/crypto'
import { sha256Hex } from '@colloquy/core/wire'
import type { IntegrityFailure, Transport } from '../src/index.js'
import { sealingTransport } from '../src/sealing.js'
import { CHUNK_BYTES } from '../src/attachment-chunks.js'
import { loopback } from './loopback.js'
import { deviceStore, encryptedStores, type Sealed } from './scenario.js'
import { createSync } from '../src/index.js'

// Attachments uploaded end-to-end encrypted are read from their Blob and sealed chunk by chunk;
// each chunk's associated data binds its attachment, index and whether it is the last, so a
// server that cuts, reorders, drops, adds or moves chunks is caught on download.

let ring: Keyring
beforeAll(async () => {
  ring = await Keyring.create({ passphrase: 'one passphrase for every device' })
})
const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

/** A Blob that can only be streamed: reading it whole throws. */
class StreamOnly extends Blob {
  override arrayBuffer(): Promise<ArrayBuffer> {
    throw new Error('read whole')
  }
  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    throw new Error('read whole')
  }
  override text(): Promise<string> {
    throw new Error('read whole')
  }
}

const patterned = (n: number): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) out[i] = (i * 31 + (i >> 8)) & 0xff
  return out
}

/** A server that keeps uploaded bytes as they came, and hands them out through `alter`. */
function holding(
  alter: (id: string, bytes: Uint8Array) => Uint8Array = (_, b) => b,
  stored?: (session_id: string, attachment_id: string) => Promise<Blob | undefined>,
) {
  const held = new Map<string, { meta: AttachmentMeta; bytes: Uint8Array }>()
  const inner: Transport = {
    push: async (r) => ({ results: r.mutations.map((m) => ({ id: m.id, status: 'applied' as const })) }),
    pull: () => Promise.reject(new Error('unused')),
    stream: () => ({ close() {} }),
    async uploadAttachment(_session_id, meta, blob) {
      held.set(meta.attachment_id, { meta, bytes: new Uint8Array(await blob.arrayBuffer()) })
    },
    async downloadAttachment(_session_id, id) {
      const h = held.get(id)
      return h ? new Blob([alter(id, h.bytes) as Uint8Array<ArrayBuffer>]) : null
    },
  }
  const refused: IntegrityFailure[] = []
  const sealed = sealingTransport(
    inner,
    ring,
    (f) => refused.push({ ...f, at: 0 }),
    undefined,
    undefined,
    undefined,
    stored,
  )
  return { held, sealed, refused }
}

const meta = (attachment_id: string, bytes: Uint8Array, sha256: string): AttachmentMeta => ({
  attachment_id,
  session_id: 's_1',
  name: 'a.bin',
  mime: 'application/octet-stream',
  size: bytes.length,
  sha256,
  created_at: 1,
})

describe('sealed uploads, chunk by chunk', () => {
  it('read the attachment as a stream and open to the same bytes, at every chunk boundary; the server holds the sealed size and hash', async () => {
    const { held, sealed, refused } = holding()
    const sizes = [0, 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 2 * CHUNK_BYTES + 5]
    for (const [i, n] of sizes.entries()) {
      const bytes = patterned(n)
      const id = `a_${i}`
      await sealed.uploadAttachment!('s_1', meta(id, bytes, await sha256Hex(bytes)), new StreamOnly([bytes]))
      const got = held.get(id)!
      expect(got.meta.size).toBe(got.bytes.length)
      expect(got.meta.sha256).toBe(await sha256Hex(got.bytes))
      const back = await sealed.downloadAttachment!('s_1', id)
      expect(new Uint8Array(await back!.arrayBuffer())).toEqual(bytes)
    }
    expect(refused).toEqual([])
  })

  it('a chunk cut off, dropped, reordered, added after the last, moved from another attachment or flipped does not open: read as missing, reported on integrity$', async () => {
    const frames = (b: Uint8Array): Uint8Array[] => {
      const out: Uint8Array[] = []
      for (let at = 1; at < b.length;) {
        const size = new DataView(b.buffer, b.byteOffset + at).getUint32(0)
        out.push(b.subarray(at, at + 4 + size))
        at += 4 + size
      }
      return out
    }
    const join = (head: number, parts: Uint8Array[]): Uint8Array => {
      const out = new Uint8Array(1 + parts.reduce((n, p) => n + p.length, 0))
      out[0] = head
      let at = 1
      for (const p of parts) {
        out.set(p, at)
        at += p.length
      }
      return out
    }
    let other: Uint8Array = new Uint8Array()
    const cases: Record<string, (b: Uint8Array) => Uint8Array> = {
      'cut at a chunk': (b) => join(b[0], frames(b).slice(0, 2)),
      'cut inside a chunk': (b) => b.subarray(0, b.length - 100),
      'middle chunk dropped': (b) => join(b[0], [frames(b)[0], frames(b)[2]]),
      reordered: (b) => join(b[0], [frames(b)[1], frames(b)[0], frames(b)[2]]),
      'a chunk added after the last': (b) => join(b[0], [...frames(b), frames(b)[2]]),
      'a chunk from another attachment': (b) => join(b[0], [frames(other)[0], ...frames(b).slice(1)]),
      flipped: (b) => {
        const c = b.slice()
        c[c.length - 20] ^= 1
        return c
      },
    }
    let current = ''
    const { held, sealed, refused } = holding((id, b) => (id === 'a_x' && current ? cases[current](b) : b))
    const bytes = patterned(2 * CHUNK_BYTES + 5)
    await sealed.uploadAttachment!('s_1', meta('a_x', bytes, await sha256Hex(bytes)), new Blob([bytes]))
    await sealed.uploadAttachment!('s_1', meta('a_y', bytes, await sha256Hex(bytes)), new Blob([bytes]))
    other = held.get('a_y')!.bytes
    expect(frames(held.get('a_x')!.bytes)).toHaveLength(3)
    // Untouched, it opens.
    expect(new Uint8Array(await (await sealed.downloadAttachment!('s_1', 'a_x'))!.arrayBuffer())).toEqual(
      bytes,
    )
    for (const name of Object.keys(cases)) {
      current = name
      refused.length = 0
      expect(await sealed.downloadAttachment!('s_1', 'a_x'), name).toBeNull()
      expect(refused, name).toMatchObject([{ change: 'attachment', id: 'a_x', code: 'session/integrity' }])
    }
  })

  it('a retried upload sends the very same sealed bytes until the push naming the attachment is answered; after it none are kept (sealed anew)', async () => {
    const { held, sealed } = holding()
    const bytes = patterned(1000)
    const m = meta('a_r', bytes, await sha256Hex(bytes))
    const sent = async () => {
      await sealed.uploadAttachment!('s_1', m, new Blob([bytes]))
      return held.get('a_r')!.bytes
    }
    const first = await sent()
    expect(await sent()).toEqual(first)
    // The push naming it, answered (the server double answers every mutation as applied).
    await sealed.push({
      mutations: [{ id: 1, change: { type: 'attachment', session_id: 's_1', attachment: m } }],
    })
    expect(await sent()).not.toEqual(first)
  })

  it('two devices whose stores are encrypted over one keyring: an attachment of three chunks put on one is read on the other', async () => {
    const sealed: Sealed = await encryptedStores()
    const server = await loopback()
    const devices = []
    for (let i = 0; i < 2; i++) {
      const store = await deviceStore(sealed)
      const sync = createSync(store, { url: 'x', transport: server.transport() })
      const refused: IntegrityFailure[] = []
      sync.integrity$.subscribe((f) => refused.push(f))
      cleanup.push(
        () => store.close(),
        () => sync.close(),
      )
      sync.start()
      devices.push({ store, sync, refused })
    }
    const [a, b] = devices
    const bytes = patterned(2 * CHUNK_BYTES + 5)
    const { session_id } = await a.store.create({})
    const { attachment } = await a.store.putAttachment({ session_id, file: new File([bytes], 'big.bin') })
    await a.sync.flush()
    await b.sync.flush()
    const blob = await b.store.getAttachmentBlob(session_id, attachment.attachment_id)
    expect(new Uint8Array(await blob!.arrayBuffer())).toEqual(bytes)
    expect([...a.refused, ...b.refused]).toEqual([])
  })

  it("the bytes an encrypted store keeps at rest are uploaded as they are: the storage's own Blob, streamed (never read whole), opened on another device", async () => {
    const sealed: Sealed = await encryptedStores()
    const server = await loopback()
    // The storage's Blobs can only be streamed: opening one (reading it whole) throws.
    const storage = memoryStorage()
    const kept = storage.attachmentBytes!.bind(storage)
    const given: Blob[] = []
    storage.attachmentBytes = async (session_id, attachment_id) => {
      const b = await kept(session_id, attachment_id)
      if (!b) return b
      const out = new StreamOnly([b])
      given.push(out)
      return out
    }
    const uploads: Array<{ meta: AttachmentMeta; bytes: Blob }> = []
    const base = server.transport()
    const transport: Transport = {
      ...base,
      // What crosses the network: the body streamed (as fetch sends a Blob).
      uploadAttachment: async (session_id, meta, bytes) => {
        uploads.push({ meta, bytes })
        const body = new Blob([await new Response(bytes.stream()).arrayBuffer()])
        return base.uploadAttachment!(session_id, meta, body)
      },
    }
    const a = await deviceStore(sealed, storage)
    const syncA = createSync(a, { url: 'x', transport })
    const b = await deviceStore(sealed)
    const syncB = createSync(b, { url: 'x', transport: server.transport() })
    const refused: IntegrityFailure[] = []
    for (const sync of [syncA, syncB]) sync.integrity$.subscribe((f) => refused.push(f))
    cleanup.push(
      () => a.close(),
      () => syncA.close(),
      () => b.close(),
      () => syncB.close(),
    )
    const bytes = patterned(2 * CHUNK_BYTES + 5)
    const { session_id } = await a.create({})
    const { attachment } = await a.putAttachment({ session_id, file: new File([bytes], 'big.bin') })
    const atRest = new Uint8Array(await (await kept(session_id, attachment.attachment_id))!.arrayBuffer())
    syncA.start()
    syncB.start()
    await syncA.flush()
    expect(uploads).toHaveLength(1)
    // The very Blob the storage gave: nothing was opened, sealed again or copied.
    expect(given).toContain(uploads[0].bytes)

    expect(uploads[0].meta.size).toBe(atRest.length)
    expect(uploads[0].meta.sha256).toBe(await sha256Hex(atRest))
    await syncB.flush()
    const blob = await b.getAttachmentBlob(session_id, attachment.attachment_id)
    expect(new Uint8Array(await blob!.arrayBuffer())).toEqual(bytes)
    expect(refused).toEqual([])
  })

  it('bytes kept at rest go up the same after the push naming them is answered (as after a reload): same size, sha256 and bytes', async () => {
    const atRest = new Blob([patterned(2 * CHUNK_BYTES + 5)])
    const { held, sealed } = holding(undefined, async (_, id) => (id === 'a_s' ? atRest : undefined))
    const bytes = patterned(1000)
    const m = meta('a_s', bytes, await sha256Hex(bytes))
    const sent = async () => {
      expect(await sealed.uploadStored('s_1', m)).toBe(true)
      return held.get('a_s')!
    }
    const first = await sent()
    await sealed.push({
      mutations: [{ id: 1, change: { type: 'attachment', session_id: 's_1', attachment: m } }],
    })
    const again = await sent()
    expect(again.bytes).toEqual(first.bytes)
    expect({ size: again.meta.size, sha256: again.meta.sha256 }).toEqual({
      size: atRest.size,
      sha256: await sha256Hex(new Uint8Array(await atRest.arrayBuffer())),
    })
    // None kept for another attachment: the caller seals its clear bytes instead.
    expect(await sealed.uploadStored('s_1', meta('a_t', bytes, m.sha256))).toBe(false)
  })
})
