import { SessionError } from '@colloquy/core'
import {
  ENVELOPE_VERSION,
  openBytes,
  sealBytes,
  type KeySource,
  type SealContext,
} from '@colloquy/core/crypto'

// An attachment's bytes as sync uploads them end-to-end encrypted: read from its Blob and sealed
// one chunk at a time, so the clear bytes are never held whole. Each chunk is one of core's
// envelopes (`sealBytes`: its own IV, padded), whose associated data binds the session, the
// attachment, the chunk's index and whether it is the last: chunks moved from another
// attachment, reordered, dropped, added after the last or cut off at the end do not open.
//
// Layout: one byte CHUNKED, then per chunk its envelope's length (4 bytes, big-endian) and the
// envelope. A chunk's clear length plus padding's marker byte is a padding bucket, so only the
// last chunk is padded: what the size tells is the number of full chunks and the bucket of
// the rest (docs/encryption.md).

/** The first byte of the chunked layout; core's single envelope starts with its version. */
export const CHUNKED = 0xc1
if ((CHUNKED as number) === ENVELOPE_VERSION)
  throw new Error('the chunked layout must differ from an envelope')

/** Clear bytes per chunk: with the marker byte, exactly a padding bucket (2^18). */
export const CHUNK_BYTES = 2 ** 18 - 1

const context = (session_id: string, attachment_id: string, index: number, last: boolean): SealContext => ({
  session_id,
  entry_id: attachment_id,
  revision: 0,
  field: 'attachment.chunk',
  bound: [index, last],
})

/** Whether `sealed` is in the chunked layout (else: one envelope, as core seals bytes). */
export const isChunked = (sealed: Uint8Array): boolean => sealed.length > 0 && sealed[0] === CHUNKED

/** Calls `each` with `blob`'s bytes in pieces of exactly `size` (the last one shorter, maybe empty). */
async function inPieces(
  blob: Blob,
  size: number,
  each: (piece: Uint8Array, last: boolean) => Promise<void>,
): Promise<void> {
  const total = blob.size
  const reader = blob.stream().getReader()
  let piece = new Uint8Array(Math.min(size, total))
  let filled = 0
  let done = 0
  for (;;) {
    const { value, done: end } = await reader.read()
    if (end) break
    for (let at = 0; at < value.length;) {
      if (done === total) throw new SessionError('session/storage', 'attachment: more bytes than its size')
      const n = Math.min(piece.length - filled, value.length - at)
      piece.set(value.subarray(at, at + n), filled)
      filled += n
      at += n
      if (filled < piece.length) continue
      done += filled
      await each(piece, done === total)
      piece = new Uint8Array(Math.min(size, total - done))
      filled = 0
    }
  }
  if (total === 0) await each(new Uint8Array(0), true)
  else if (done !== total) throw new SessionError('session/storage', 'attachment: fewer bytes than its size')
}

/** `blob`'s bytes sealed chunk by chunk, bound to the attachment (see the layout above). */
export async function sealAttachmentChunks(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  blob: Blob,
): Promise<Uint8Array> {
  const frames: Uint8Array[] = []
  let index = 0
  let length = 1
  await inPieces(blob, CHUNK_BYTES, async (piece, last) => {
    const envelope = await sealBytes(keys, piece, context(session_id, attachment_id, index++, last))
    const frame = new Uint8Array(4 + envelope.length)
    new DataView(frame.buffer).setUint32(0, envelope.length)
    frame.set(envelope, 4)
    frames.push(frame)
    length += frame.length
  })
  const out = new Uint8Array(length)
  out[0] = CHUNKED
  let at = 1
  for (const f of frames.splice(0)) {
    out.set(f, at)
    at += f.length
  }
  return out
}

/** The clear bytes of a chunked attachment; `session/integrity` if any chunk is not where it was sealed. */
export async function openAttachmentChunks(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  sealed: Uint8Array,
): Promise<Uint8Array> {
  const bad = (why: string): SessionError =>
    new SessionError('session/integrity', `attachment ${attachment_id}: ${why}`)
  if (!isChunked(sealed)) throw bad('not in the chunked layout')
  const view = new DataView(sealed.buffer, sealed.byteOffset, sealed.byteLength)
  const pieces: Uint8Array[] = []
  let length = 0
  let at = 1
  for (let index = 0; ; index++) {
    if (at + 4 > sealed.length) throw bad(`chunk ${index} is cut off`)
    const size = view.getUint32(at)
    if (at + 4 + size > sealed.length) throw bad(`chunk ${index} is cut off`)
    const last = at + 4 + size === sealed.length
    // Opened as the last chunk only if it ends the bytes: one sealed as last but followed by
    // more, or one sealed as not last but ending them (the rest cut off), does not open.
    const piece = await openBytes(
      keys,
      sealed.subarray(at + 4, at + 4 + size),
      context(session_id, attachment_id, index, last),
    )
    pieces.push(piece)
    length += piece.length
    at += 4 + size
    if (last) break
  }
  const out = new Uint8Array(length)
  let to = 0
  for (const p of pieces) {
    out.set(p, to)
    to += p.length
  }
  return out
}
