import { sealChunks, type KeySource } from '@colloquy/core/crypto'
import { concatBytes } from '@colloquy/core/wire'

// An attachment's bytes as sync uploads them end-to-end encrypted: core's chunked layout
// (`@colloquy/core/crypto`, attachment-chunks.ts), the same as at rest. This is a wire change
// from the single envelope: older clients cannot open the chunked layout.
export { CHUNKED, CHUNK_BYTES, isChunked } from '@colloquy/core/crypto'

/** `blob`'s bytes sealed chunk by chunk, bound to the attachment, joined for the upload. */
export async function sealAttachmentChunks(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  blob: Blob,
): Promise<Uint8Array> {
  const frames: Uint8Array[] = []
  await sealChunks(keys, session_id, attachment_id, blob, (f) => void frames.push(f))
  return concatBytes(frames)
}
