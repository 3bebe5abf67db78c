import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { CHUNK_BYTES, sealChunks, type KeySource } from '@colloquy/core/crypto'

// An attachment's bytes as sync uploads them end-to-end encrypted: core's chunked layout
// (`@colloquy/core/crypto`, attachment-chunks.ts), the same as at rest. This is a wire change
// from the single envelope: older clients cannot open the chunked layout.
//
// The upload names the sealed bytes' size and sha256 before its body (the server hashes every
// byte it spools and refuses a body that does not match), and Web Crypto hashes only a whole
// buffer. The hash here is incremental (@noble/hashes' SHA-256, about 2.3 kB gzipped), so no
// upload ever holds its sealed bytes whole: they are hashed a piece at a time as they are read
// or sealed. Chosen over per-chunk digests the server checks, which need a wire change (and a
// new server for new clients), and over a deterministic reseal, whose IVs would have to come
// from a key Web Crypto lets us derive from (ours are AES-GCM keys, usable for nothing else).
// The price: hashing in JS runs at about a quarter of Web Crypto's speed (measured: 64 MB in
// ~0.4 s against ~0.1 s in Node), in pieces of at most a chunk, so the page is never held long.
export { CHUNKED, CHUNK_BYTES, isChunked } from '@colloquy/core/crypto'

/** Bytes ready to upload: a Blob, and the size and sha256 the upload names them by. */
export interface UploadBytes {
  readonly bytes: Blob
  readonly size: number
  readonly sha256: string
}

/** How much of a Blob `digestBlob` reads at a time: a few chunks (fewer reads, each a round trip). */
const SLICE = 4 * (CHUNK_BYTES + 1)

/**
 * `blob`'s size and sha256, read in slices (not a stream: Chromium's Blob stream reads megabytes
 * ahead of its reader), the next slice read while this one is hashed: two slices held at most.
 */
export async function digestBlob(blob: Blob): Promise<UploadBytes> {
  const hash = sha256.create()
  const read = (at: number): Promise<ArrayBuffer> | undefined =>
    at < blob.size ? blob.slice(at, at + SLICE).arrayBuffer() : undefined
  let next = read(0)
  for (let at = 0; next; at += SLICE) {
    const piece = new Uint8Array(await next)
    next = read(at + SLICE)
    next?.catch(() => {}) // awaited next round (nothing throws before it)
    hash.update(piece)
  }
  return { bytes: blob, size: blob.size, sha256: bytesToHex(hash.digest()) }
}

/**
 * `blob`'s bytes sealed chunk by chunk, bound to the attachment, hashed as they are sealed. Each
 * framed chunk is made a Blob of its own as it comes (the platform's blob store keeps it, paged
 * to disk when large; in a browser, not the page's memory) and the upload is a Blob of those, so
 * only the few chunks being sealed are held here.
 */
export async function sealAttachmentChunks(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  blob: Blob,
): Promise<UploadBytes> {
  const hash = sha256.create()
  const parts: Blob[] = []
  let size = 0
  await sealChunks(keys, session_id, attachment_id, blob, (frame) => {
    for (const part of frame) {
      hash.update(part)
      size += part.length
    }
    parts.push(new Blob([...frame]))
  })
  return { bytes: new Blob(parts), size, sha256: bytesToHex(hash.digest()) }
}
