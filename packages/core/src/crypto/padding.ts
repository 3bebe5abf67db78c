import { SessionError } from '../model/errors.js'

// Plaintext is padded before it is sealed, so a ciphertext's length tells the bucket, not the
// length: Padmé buckets (Nikitin et al., "Reducing Metadata Leakage from Encrypted Files and
// Communication with PURBs", 2019) cost at most 12% and leave O(log log n) bits of the length,
// against log n for exact lengths. Below MIN_BUCKET every length looks the same ("ok" and a
// one-line question are indistinguishable).

/** The smallest padded length: short values (titles, yes/no replies, drafts) all look alike. */
export const MIN_BUCKET = 64

/** The padded length for `n` bytes (the marker byte included). */
export function bucketOf(n: number): number {
  if (n <= MIN_BUCKET) return MIN_BUCKET
  const e = Math.floor(Math.log2(n))
  const s = Math.floor(Math.log2(e)) + 1
  const step = 2 ** (e - s)
  return Math.ceil(n / step) * step
}

/** `bytes`, a 0x80 marker, then zeros up to the bucket (ISO/IEC 7816-4 padding, removable exactly). */
export function pad(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(bucketOf(bytes.length + 1))
  out.set(bytes)
  out[bytes.length] = 0x80
  return out
}

/**
 * The same padding written after the first `n` bytes of `buf` (which must have room for the
 * bucket): a view of `buf`, no copy.
 */
export function padInPlace(buf: Uint8Array, n: number): Uint8Array<ArrayBuffer> {
  const size = bucketOf(n + 1)
  if (size > buf.length)
    throw new RangeError(`padInPlace: ${buf.length} bytes cannot hold a bucket of ${size}`)
  buf[n] = 0x80
  buf.fill(0, n + 1, size)
  return buf.subarray(0, size) as Uint8Array<ArrayBuffer>
}

/**
 * The bytes before the marker. Anything but a well-formed padding of a bucket's length is
 * refused: only a writer holding the key produces padded text, so a bad one is not ours.
 */
export function unpad(padded: Uint8Array, where: string): Uint8Array {
  let i = padded.length - 1
  while (i >= 0 && padded[i] === 0) i--
  if (i < 0 || padded[i] !== 0x80 || bucketOf(i + 1) !== padded.length)
    throw new SessionError('session/integrity', `${where}: the opened value is not padded as sealed`)
  return padded.subarray(0, i)
}
