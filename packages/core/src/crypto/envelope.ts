import type { Json } from '../model/model.js'
import { SessionError } from '../model/errors.js'
import { decodeBase64, encodeBase64 } from '../util/bytes.js'
import { MIN_BUCKET, bucketOf, pad, padInPlace, unpad } from './padding.js'

// The one sealed-value format. Binary (attachment bytes are stored as is):
//   [0]          format version (1)
//   [1]          key id length L (1..32)
//   [2, 2+L)     key id, ASCII [A-Za-z0-9_-]
//   [2+L, 14+L)  AES-GCM IV, 96 random bits, fresh for every seal
//   [14+L, …)    AES-GCM ciphertext of the padded plaintext, 128-bit tag at its end
// In JSON records the same bytes travel as standard base64. The associated data (never stored:
// each side rebuilds it from where the value sits) binds the version, the key id and the value's
// place: session id, entry id, revision, field, and the record's clear fields a reader relies on.

export const ENVELOPE_VERSION = 1
const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/

/** Where a sealed value belongs: what its associated data binds. */
export interface SealContext {
  session_id: string
  /** The entry's id; an attachment's id; `''` for a session's own fields. */
  entry_id: string
  /** The entry's revision; a meta field's own counter; 0 for what never changes (attachments). */
  revision: number
  /** Which value of the record: `entry`, `meta.title`, `attachment.bytes`… */
  field: string
  /** The record's clear fields that must not change under the value (parent, role, timestamp…). */
  bound?: Json
}

/** What seals and opens: a keyring's current data key, and any of its keys by id. */
export interface KeySource {
  readonly currentKeyId: string
  keyFor(id: string): CryptoKey | undefined
}

export const isKeyId = (s: unknown): s is string => typeof s === 'string' && KEY_ID.test(s)

const utf8 = new TextEncoder()
const utf8Strict = new TextDecoder('utf-8', { fatal: true })

const describe = (c: SealContext): string =>
  `${c.field} of ${c.entry_id ? `${c.entry_id} in ` : ''}session ${c.session_id}`

/**
 * Scratch buffers for the associated data and a JSON value's padded text: Web Crypto copies its
 * inputs when `encrypt`/`decrypt` is called (WebCrypto §14.3: "a copy of the bytes held by the
 * data parameter"), so a view of one is consumed before this thread can reuse it. Sealing 10,000
 * entries in one commit then makes one buffer each, the output, not four.
 */
let adScratch = new Uint8Array(1024)
let textScratch = new Uint8Array(16384)

/** `text` as UTF-8 in `buf`, or undefined when `buf` may be too small. */
const encodeIn = (text: string, buf: Uint8Array): number | undefined => {
  const { read, written } = utf8.encodeInto(text, buf)
  return read === text.length ? written : undefined
}

function associatedData(keyId: string, c: SealContext): Uint8Array<ArrayBuffer> {
  if (!Number.isSafeInteger(c.revision) || c.revision < 0)
    throw new SessionError(
      'session/invalid_request',
      `${describe(c)}: revision must be a non-negative integer`,
    )
  // A JSON array of strings and integers has one encoding per value: no two places share one.
  const text = JSON.stringify([
    'colloquy',
    ENVELOPE_VERSION,
    keyId,
    c.field,
    c.session_id,
    c.entry_id,
    c.revision,
    c.bound ?? null,
  ])
  let n = encodeIn(text, adScratch)
  if (n === undefined) {
    adScratch = new Uint8Array(text.length * 3)
    n = encodeIn(text, adScratch)!
  }
  // A view of the scratch: valid until the next call, so only ever passed straight to Web Crypto.
  return adScratch.subarray(0, n)
}

/** The envelope's header (version, key id) and a fresh IV, ahead of room for `sealedLength` bytes. */
function envelopeFor(
  keyId: string,
  sealedLength: number,
): { out: Uint8Array<ArrayBuffer>; iv: Uint8Array<ArrayBuffer> } {
  const out = new Uint8Array(2 + keyId.length + IV_BYTES + sealedLength)
  out[0] = ENVELOPE_VERSION
  out[1] = keyId.length
  for (let i = 0; i < keyId.length; i++) out[2 + i] = keyId.charCodeAt(i)
  const iv = out.subarray(2 + keyId.length, 2 + keyId.length + IV_BYTES) as Uint8Array<ArrayBuffer>
  crypto.getRandomValues(iv)
  return { out, iv }
}

/**
 * Starts sealing padded plaintext (read when this is called, not after): the envelope's header
 * with room for `room` bytes after it, where the ciphertext goes (`at`), and the ciphertext to come.
 */
function startSeal(
  keys: KeySource,
  padded: Uint8Array<ArrayBuffer>,
  context: SealContext,
  room: number,
): { out: Uint8Array<ArrayBuffer>; at: number; sealed: Promise<ArrayBuffer> } {
  const keyId = keys.currentKeyId
  const key = keys.keyFor(keyId)!
  const { out, iv } = envelopeFor(keyId, room)
  const sealed = crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: associatedData(keyId, context) },
    key,
    padded,
  )
  return { out, at: 2 + keyId.length + IV_BYTES, sealed }
}

/** Seals padded plaintext (read when this is called, not after) into an envelope. */
async function sealPadded(
  keys: KeySource,
  padded: Uint8Array<ArrayBuffer>,
  context: SealContext,
): Promise<Uint8Array<ArrayBuffer>> {
  const { out, at, sealed } = startSeal(keys, padded, context, padded.length + TAG_BYTES)
  out.set(new Uint8Array(await sealed), at)
  return out
}

/** Seals bytes under the keyring's current key for the place `context` names. */
export function sealBytes(keys: KeySource, plaintext: Uint8Array, context: SealContext): Promise<Uint8Array> {
  return sealPadded(keys, pad(plaintext), context)
}

/** The largest padded plaintext `sealBytesParts` pads in its scratch buffer (an attachment chunk's). */
const PARTS_SCRATCH_MAX = 2 ** 18
let partsScratch: Uint8Array | undefined

/**
 * `sealBytes`'s envelope as two parts, never joined: its header (version, key id, IV) and the
 * ciphertext as Web Crypto answered it. For a caller that writes its bytes out in parts anyway
 * (an attachment's chunks become the parts of one Blob): joining them copied each chunk into
 * fresh memory, and so did padding it, which cost a 1 MB put more than sealing it did (measured
 * in Chromium: about 3 ms a chunk, against 1 ms for its encryption). Plaintext up to a chunk's
 * size is padded in one scratch buffer, reused: Web Crypto has copied it before this returns.
 */
export async function sealBytesParts(
  keys: KeySource,
  plaintext: Uint8Array,
  context: SealContext,
): Promise<[Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>]> {
  const size = bucketOf(plaintext.length + 1)
  const scratch = size <= PARTS_SCRATCH_MAX
  let padded: Uint8Array<ArrayBuffer>
  if (!scratch) padded = pad(plaintext)
  else {
    partsScratch ??= new Uint8Array(PARTS_SCRATCH_MAX)
    partsScratch.set(plaintext)
    padded = padInPlace(partsScratch, plaintext.length)
  }
  const { out, sealed } = startSeal(keys, padded, context, 0)
  // Web Crypto took its copy when called: the plaintext does not stay behind in the scratch.
  if (scratch) padded.fill(0)
  return [out, new Uint8Array(await sealed)]
}

interface Parsed {
  keyId: string
  iv: Uint8Array<ArrayBuffer>
  body: Uint8Array<ArrayBuffer>
}

function parseEnvelope(bytes: Uint8Array, where: string): Parsed {
  const bad = (why: string): never => {
    throw new SessionError('session/integrity', `${where}: not a sealed value (${why})`)
  }
  if (bytes.length < 2) bad('too short')
  if (bytes[0] !== ENVELOPE_VERSION) bad(`unknown format ${bytes[0]}`)
  const n = bytes[1]
  if (bytes.length < 2 + n + IV_BYTES + TAG_BYTES) bad('too short')
  const keyId = String.fromCharCode(...bytes.subarray(2, 2 + n))
  if (!isKeyId(keyId)) bad('malformed key id')
  return {
    keyId,
    // Views, not copies: a megabyte attachment is not copied to be opened.
    iv: bytes.subarray(2 + n, 2 + n + IV_BYTES) as Uint8Array<ArrayBuffer>,
    body: bytes.subarray(2 + n + IV_BYTES) as Uint8Array<ArrayBuffer>,
  }
}

/** The id of the key a sealed value names (to fetch a newer keyring before opening it). */
export function keyIdOf(sealed: Uint8Array | string): string {
  const bytes = typeof sealed === 'string' ? decodeBase64(sealed) : sealed
  if (!bytes) throw new SessionError('session/integrity', 'not a sealed value (not base64)')
  return parseEnvelope(bytes, 'sealed value').keyId
}

/**
 * Opens bytes sealed for the place `context` names. A value sealed for another place (another
 * session, entry, field or revision, or other clear fields), altered in any bit, or under a key
 * this keyring lacks is refused with `session/integrity`; nothing of it is returned.
 */
export async function openBytes(
  keys: KeySource,
  sealed: Uint8Array,
  context: SealContext,
): Promise<Uint8Array> {
  const where = describe(context)
  const { keyId, iv, body } = parseEnvelope(sealed, where)
  const key = keys.keyFor(keyId)
  if (!key)
    throw new SessionError(
      'session/integrity',
      `${where}: sealed under key ${keyId}, which this keyring does not hold`,
    )
  let padded: Uint8Array
  try {
    padded = new Uint8Array(
      await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv, additionalData: associatedData(keyId, context) },
        key,
        body,
      ),
    )
  } catch (cause) {
    throw new SessionError(
      'session/integrity',
      `${where}: does not open here (altered, or sealed for another place or revision)`,
      { cause },
    )
  }
  return unpad(padded, where)
}

/**
 * A JSON value sealed as bytes, in an ArrayBuffer of its own: the form a browser's storage keeps
 * an entry's box in. IndexedDB stores bytes as they are (base64 text is a third larger, and W4's
 * cold read of a long session is the time to read those bytes), and clones a bare ArrayBuffer
 * faster than a view of one (measured in Chromium: 10,000 puts issued in 477 ms against 672 ms).
 */
export async function sealJsonBytes(
  keys: KeySource,
  value: Json,
  context: SealContext,
): Promise<ArrayBuffer> {
  const text = JSON.stringify(value)
  let n = encodeIn(text, textScratch)
  // Room for the text and its padding (a bucket is at most 12% above its length, plus the marker).
  if (n === undefined || textScratch.length < n * 1.25 + MIN_BUCKET) {
    textScratch = new Uint8Array(Math.ceil(text.length * 3 * 1.25) + MIN_BUCKET)
    n = encodeIn(text, textScratch)!
  }
  const padded = padInPlace(textScratch, n)
  const sealing = sealPadded(keys, padded, context)
  // Web Crypto took its copy when called: the plaintext does not stay behind in the scratch.
  padded.fill(0)
  // The envelope is a buffer of its own (`envelopeFor`), exactly its length.
  return (await sealing).buffer
}

/** A JSON value sealed as base64 text (the form JSON records hold: the wire, a server's storage). */
export async function sealJson(keys: KeySource, value: Json, context: SealContext): Promise<string> {
  return encodeBase64(new Uint8Array(await sealJsonBytes(keys, value, context)))
}

/**
 * Opens what `sealJson` (text) or `sealJsonBytes` (bytes) sealed for the same place; the value
 * still needs its schema's check.
 */
export async function openJson(
  keys: KeySource,
  sealed: string | ArrayBuffer,
  context: SealContext,
): Promise<unknown> {
  const bytes = typeof sealed === 'string' ? decodeBase64(sealed) : new Uint8Array(sealed)
  if (!bytes)
    throw new SessionError('session/integrity', `${describe(context)}: not a sealed value (not base64)`)
  const plain = await openBytes(keys, bytes, context)
  try {
    return JSON.parse(utf8Strict.decode(plain))
  } catch (cause) {
    throw new SessionError('session/integrity', `${describe(context)}: the opened value is not JSON`, {
      cause,
    })
  }
}
