import { SessionError } from '../model/errors.js'
import { concatBytes } from '../util/bytes.js'
import { ENVELOPE_VERSION, openBytes, sealBytesParts, type KeySource, type SealContext } from './envelope.js'

// An attachment's bytes sealed in chunks, at rest and on the wire alike: read from its Blob and
// sealed one chunk at a time, so the clear bytes are never held whole, and opened chunk by
// chunk, all at once (Web Crypto works them off the page's thread): into pieces, or into the
// one buffer a whole read answers, each chunk copied in as it opens. Each chunk is one of the envelopes (`sealBytes`: its own IV,
// padded), whose associated data binds the session, the attachment, the chunk's index and
// whether it is the last: chunks moved from another attachment, reordered, dropped, added
// after the last or cut off at the end do not open.
//
// Layout: one byte CHUNKED, then per chunk its envelope's length (4 bytes, big-endian) and the
// envelope. A chunk's clear length plus padding's marker byte is a padding bucket, so only the
// last chunk is padded: what the size tells is the number of full chunks and the bucket of
// the rest (docs/encryption.md).

/** The first byte of the chunked layout; a single envelope starts with its version. */
export const CHUNKED = 0xc1
if ((CHUNKED as number) === ENVELOPE_VERSION)
  throw new Error('the chunked layout must differ from an envelope')

/** Clear bytes per chunk: with the marker byte, exactly a padding bucket (2^18). */
export const CHUNK_BYTES = 2 ** 18 - 1

/** Chunks being sealed at once: enough to keep Web Crypto busy, few enough to bound memory. */
const IN_FLIGHT = 4

/**
 * Chunks sealed before the sealer starts yielding a task between chunks (`nextTask`): 2 MiB.
 * What an unbroken chain keeps alive is bounded by it, while an attachment of up to that size
 * seals without a task turn per chunk, which cost a 1 MB put more than the yields spared it
 * (measured in Chromium: 14.5 ms with them, 12.9 ms without, medians of 11).
 */
const YIELD_AFTER = 8

const context = (session_id: string, attachment_id: string, index: number, last: boolean): SealContext => ({
  session_id,
  entry_id: attachment_id,
  revision: 0,
  field: 'attachment.chunk',
  bound: [index, last],
})

/**
 * Resolves in a task of its own (not a microtask, and unlike `setTimeout` never clamped). A
 * page's engine lets go of what each Web Crypto call held only once the event loop turns; a
 * chain of seals that never yields to it keeps every chunk's buffers alive to its end (measured
 * in Chromium: a 64 MiB attachment sealed in one chain, 190 MiB live at its end).
 */
const nextTask = (): Promise<void> =>
  new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel()
    port1.onmessage = () => {
      port1.close()
      resolve()
    }
    port2.postMessage(null)
  })

/** Whether `sealed` is in the chunked layout (else: one envelope, the layout before it). */
export const isChunked = (sealed: Uint8Array): boolean => sealed.length > 0 && sealed[0] === CHUNKED

/**
 * Calls `each` with `blob`'s bytes in pieces of exactly `size` (the last one shorter, maybe
 * empty); bytes already read are handed over as views of them. A Blob is read a slice at a time,
 * the next one while this one is handed over: a stream would read ahead (by megabytes, in
 * Chromium) of what is sealed.
 */
async function inPieces(
  blob: Blob | Uint8Array,
  size: number,
  each: (piece: Uint8Array, last: boolean) => Promise<void>,
): Promise<void> {
  const total = blob instanceof Uint8Array ? blob.length : blob.size
  // The next slice is read while this one is handed over (two held at most).
  const read = (at: number): Promise<Uint8Array> =>
    blob instanceof Uint8Array
      ? Promise.resolve(blob.subarray(at, at + size))
      : blob
          .slice(at, at + size)
          .arrayBuffer()
          .then((b) => new Uint8Array(b))
  let next = read(0)
  let at = 0
  do {
    const end = Math.min(at + size, total)
    const piece = await next
    if (piece.length !== end - at)
      throw new SessionError('session/storage', 'attachment: fewer bytes than its size')
    at = end
    if (at < total) {
      next = read(at)
      // Awaited next round; if `each` throws first, its failure is not left unhandled.
      next.catch(() => {})
    }
    await each(piece, at === total)
  } while (at < total)
}

/**
 * Seals `blob`'s bytes chunk by chunk and hands each framed chunk to `each`, in order, as the
 * parts that make it up, never joined (its length and its envelope's header in one, then the
 * ciphertext as Web Crypto answered it), the layout's first byte before them. At most a few
 * chunks are held at once, whatever the size.
 */
export async function sealChunks(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  blob: Blob | Uint8Array,
  each: (frame: readonly Uint8Array<ArrayBuffer>[]) => void | Promise<void>,
): Promise<void> {
  await each([Uint8Array.of(CHUNKED)])
  const pending: Promise<Uint8Array<ArrayBuffer>[]>[] = []
  const frame = async (
    sealing: Promise<[Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>]>,
  ): Promise<Uint8Array<ArrayBuffer>[]> => {
    const [header, body] = await sealing
    const head = new Uint8Array(4 + header.length)
    new DataView(head.buffer).setUint32(0, header.length + body.length)
    head.set(header, 4)
    return [head, body]
  }
  let index = 0
  await inPieces(blob, CHUNK_BYTES, async (piece, last) => {
    // The piece is padded (copied) before `sealBytesParts` returns: the next may be read at once.
    pending.push(frame(sealBytesParts(keys, piece, context(session_id, attachment_id, index++, last))))
    if (pending.length >= IN_FLIGHT) {
      await each(await pending.shift()!)
      if (index > YIELD_AFTER) await nextTask()
    }
  })
  while (pending.length) await each(await pending.shift()!)
}

/** `blob`'s bytes sealed in the chunked layout, as a Blob of the framed chunks (never joined). */
export async function sealChunksToBlob(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  blob: Blob | Uint8Array,
): Promise<Blob> {
  const parts: Uint8Array<ArrayBuffer>[] = []
  await sealChunks(keys, session_id, attachment_id, blob, (f) => void parts.push(...f))
  return new Blob(parts)
}

/** A chunk's envelope and what it must have been sealed for. */
interface Frame {
  readonly envelope: Uint8Array
  readonly context: SealContext
}

/**
 * The chunks of the chunked layout, before any is opened: `session/integrity` if the framing
 * is not that of whole chunks ending exactly at the end.
 */
function framesOf(session_id: string, attachment_id: string, sealed: Uint8Array): Frame[] {
  const bad = (why: string): SessionError =>
    new SessionError('session/integrity', `attachment ${attachment_id}: ${why}`)
  if (!isChunked(sealed)) throw bad('not in the chunked layout')
  const view = new DataView(sealed.buffer, sealed.byteOffset, sealed.byteLength)
  const frames: Frame[] = []
  let at = 1
  for (let index = 0; ; index++) {
    if (at + 4 > sealed.length) throw bad(`chunk ${index} is cut off`)
    const size = view.getUint32(at)
    if (at + 4 + size > sealed.length) throw bad(`chunk ${index} is cut off`)
    const last = at + 4 + size === sealed.length
    // Opened as the last chunk only if it ends the bytes: one sealed as last but followed by
    // more, or one sealed as not last but ending them (the rest cut off), does not open.
    frames.push({
      envelope: sealed.subarray(at + 4, at + 4 + size),
      context: context(session_id, attachment_id, index, last),
    })
    at += 4 + size
    if (last) return frames
  }
}

/**
 * Opens every frame, all at once, `order` saying which first; `opened` is told of each as it
 * opens (with the pieces opened so far, in place). Answers once every one has settled (so none is left opening after a refusal): the
 * pieces in the frames' order, or the first refusal.
 */
async function openFrames(
  keys: KeySource,
  frames: readonly Frame[],
  order: readonly number[],
  opened?: (index: number, pieces: readonly Uint8Array[]) => void,
): Promise<Uint8Array[]> {
  const pieces: Uint8Array[] = new Array(frames.length)
  const settled = await Promise.allSettled(
    order.map(async (i) => {
      const piece = await openBytes(keys, frames[i]!.envelope, frames[i]!.context)
      pieces[i] = piece
      opened?.(i, pieces)
    }),
  )
  const failed = settled.find((r) => r.status === 'rejected')
  if (failed) throw failed.reason
  return pieces
}

/**
 * The clear bytes of a chunked attachment, as the pieces (one per chunk, views of what Web
 * Crypto returned) in order; `session/integrity` if any chunk is not where it was sealed.
 */
export function openChunks(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  sealed: Uint8Array,
): Promise<Uint8Array[]> {
  const frames = framesOf(session_id, attachment_id, sealed)
  return openFrames(
    keys,
    frames,
    frames.map((_, i) => i),
  )
}

/**
 * The clear bytes of a chunked attachment in one buffer of their exact length, for a read that
 * answers them whole: each chunk is copied in as it opens, while the others are still opening
 * on Web Crypto's thread, rather than all joined after the last one. The last chunk is opened
 * first: its length, after the full chunks before it, gives the whole's. Nothing is answered
 * unless every chunk opened (`session/integrity` as `openChunks`). `ready`, a buffer of the
 * length the metadata gives (made while the sealed bytes were read), is the one used when the
 * bytes are exactly that long.
 */
export async function openChunksWhole(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  sealed: Uint8Array,
  ready?: Uint8Array,
): Promise<Uint8Array> {
  const frames = framesOf(session_id, attachment_id, sealed)
  const n = frames.length
  if (n === 1) return (await openFrames(keys, frames, [0]))[0]!
  let whole: Uint8Array | undefined
  // Chunks before the last are CHUNK_BYTES long as sealed here; any other length (sealed by
  // another writer) is still opened, and joined once every chunk is here.
  let regular = true
  const order = [n - 1, ...Array.from({ length: n - 1 }, (_, i) => i)]
  const pieces = await openFrames(keys, frames, order, (i, opened) => {
    const piece = opened[i]!
    if (i < n - 1 && piece.length !== CHUNK_BYTES) regular = false
    if (!regular) return
    if (i === n - 1) {
      const length = (n - 1) * CHUNK_BYTES + piece.length
      const into = (whole = ready?.length === length ? ready : new Uint8Array(length))
      opened.forEach((p, j) => into.set(p, j * CHUNK_BYTES))
    } else whole?.set(piece, i * CHUNK_BYTES)
  })
  return regular ? whole! : concatBytes(pieces)
}
