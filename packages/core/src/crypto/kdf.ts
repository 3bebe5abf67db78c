import { SessionError, invalid } from '../model/errors.js'
import { decodeBase64, encodeBase64 } from '../util/bytes.js'

// Passphrase → key-encryption key (KEK): PBKDF2-SHA-256, the slow KDF Web Crypto has natively in
// every browser and Node (Argon2id would need a WASM package). 600,000 iterations is OWASP's
// figure for PBKDF2-HMAC-SHA256 (2023); the count and salt are stored with the keyring, so it can
// be raised later without breaking old keyrings. The KEK is non-extractable and can only wrap
// and unwrap keys: it never encrypts content, so it never meets a ciphertext an attacker chose.

export const MIN_ITERATIONS = 600_000
/** A keyring from elsewhere naming more would stall the page for minutes: refused. */
export const MAX_ITERATIONS = 10_000_000
const SALT_BYTES = 16

export interface KdfParams {
  name: 'PBKDF2'
  hash: 'SHA-256'
  iterations: number
  /** Standard base64 of 16 to 64 random bytes. */
  salt: string
}

/** What unlocks a keyring: a passphrase (through the KDF), or a key-encryption key the app holds. */
export type KeySecret = { passphrase: string } | { key: CryptoKey }

export function newKdfParams(iterations = MIN_ITERATIONS): KdfParams {
  checkIterations(iterations, 'iterations')
  return {
    name: 'PBKDF2',
    hash: 'SHA-256',
    iterations,
    salt: encodeBase64(crypto.getRandomValues(new Uint8Array(SALT_BYTES))),
  }
}

function checkIterations(n: unknown, path: string): void {
  if (!Number.isSafeInteger(n) || (n as number) < MIN_ITERATIONS || (n as number) > MAX_ITERATIONS)
    throw invalid(`${path}: PBKDF2 iterations must be an integer from ${MIN_ITERATIONS} to ${MAX_ITERATIONS}`)
}

/** Checks stored KDF parameters (they come back from a server: hostile until checked). */
export function parseKdfParams(v: unknown, path: string): KdfParams {
  const o = v as Partial<KdfParams> | null
  if (typeof o !== 'object' || o === null) throw invalid(`${path}: must be an object`)
  if (o.name !== 'PBKDF2' || o.hash !== 'SHA-256') throw invalid(`${path}: only PBKDF2 with SHA-256 is known`)
  checkIterations(o.iterations, `${path}.iterations`)
  const salt = typeof o.salt === 'string' ? decodeBase64(o.salt) : undefined
  if (!salt || salt.length < 16 || salt.length > 64)
    throw invalid(`${path}.salt: must be base64 of 16 to 64 bytes`)
  return { name: 'PBKDF2', hash: 'SHA-256', iterations: o.iterations!, salt: o.salt! }
}

const KEK_USAGES: KeyUsage[] = ['wrapKey', 'unwrapKey']

/** The KEK for `secret`: derived from a passphrase with `params`, or the app's own key, checked. */
export async function keyEncryptionKey(secret: KeySecret, params: KdfParams | null): Promise<CryptoKey> {
  if (typeof secret !== 'object' || secret === null)
    throw invalid('secret: must be { passphrase } or { key }')
  if ('key' in secret) {
    if (params) throw invalid('secret: this keyring is unlocked with a passphrase, not a key')
    const { key } = secret
    const algorithm = key?.algorithm as { name?: string } | undefined
    if (algorithm?.name !== 'AES-GCM' || !KEK_USAGES.every((u) => key.usages.includes(u)))
      throw invalid('secret.key: must be an AES-GCM CryptoKey with the wrapKey and unwrapKey usages')
    return key
  }
  if (!params) throw invalid('secret: this keyring is unlocked with a key, not a passphrase')
  const { passphrase } = secret
  if (typeof passphrase !== 'string' || passphrase.length === 0)
    throw invalid('secret.passphrase: must be a non-empty string')
  // NFC: the same passphrase typed on systems that compose accents differently is the same key.
  const material = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(passphrase.normalize('NFC')),
    'PBKDF2',
    false,
    ['deriveKey'],
  )
  try {
    return await crypto.subtle.deriveKey(
      {
        name: 'PBKDF2',
        hash: 'SHA-256',
        salt: decodeBase64(params.salt)! as Uint8Array<ArrayBuffer>,
        iterations: params.iterations,
      },
      material,
      { name: 'AES-GCM', length: 256 },
      false,
      KEK_USAGES,
    )
  } catch (cause) {
    throw new SessionError('session/storage', 'key derivation failed', { cause })
  }
}
