import { SessionError, invalid } from '../model/errors.js'
import { decodeBase64, encodeBase64 } from '../util/bytes.js'
import { isKeyId, type KeySource } from './envelope.js'
import { keyEncryptionKey, newKdfParams, parseKdfParams, type KdfParams, type KeySecret } from './kdf.js'

// The key hierarchy (after Standard Notes' protocol 004): secret → KEK → random data keys.
// Content is sealed under data keys only; the KEK wraps them. So a passphrase change re-wraps a
// few keys and touches no content, and rotation adds a data key that new writes use while every
// older one stays to open what it sealed (each sealed value names its key).

/** One data key as stored: its id, its order of creation, and the key wrapped under the KEK. */
export interface WrappedKey {
  id: string
  seq: number
  /** Standard base64 of the wrap's 96-bit IV followed by the AES-GCM-wrapped raw key. */
  wrapped: string
}

/**
 * What a server keeps for new devices: salt, KDF parameters and wrapped keys. It holds no usable
 * key: opening it takes the passphrase (or the app's key).
 */
export interface SerializedKeyring {
  format: 'colloquy-keyring'
  version: 1
  /** `null` when the keyring is unlocked with an app-held key instead of a passphrase. */
  kdf: KdfParams | null
  keys: WrappedKey[]
}

const MAX_KEYS = 1000
const IV_BYTES = 12
const DATA_KEY: AesKeyGenParams = { name: 'AES-GCM', length: 256 }
const DATA_USAGES: KeyUsage[] = ['encrypt', 'decrypt']

const wrapData = (id: string, seq: number): Uint8Array<ArrayBuffer> =>
  new TextEncoder().encode(JSON.stringify(['colloquy-key', 1, id, seq]))

function newKeyId(): string {
  let hex = ''
  for (const b of crypto.getRandomValues(new Uint8Array(8))) hex += b.toString(16).padStart(2, '0')
  return `k${hex}`
}

async function wrap(kek: CryptoKey, key: CryptoKey, id: string, seq: number): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES))
  const wrapped = new Uint8Array(
    await crypto.subtle.wrapKey('raw', key, kek, { name: 'AES-GCM', iv, additionalData: wrapData(id, seq) }),
  )
  const out = new Uint8Array(IV_BYTES + wrapped.length)
  out.set(iv)
  out.set(wrapped, IV_BYTES)
  return encodeBase64(out)
}

/** Unwraps a data key; a wrong KEK (wrong passphrase) or an altered wrapped key cannot. */
async function unwrap(kek: CryptoKey, k: WrappedKey, extractable: boolean): Promise<CryptoKey> {
  const bytes = decodeBase64(k.wrapped)!
  try {
    return await crypto.subtle.unwrapKey(
      'raw',
      bytes.slice(IV_BYTES),
      kek,
      { name: 'AES-GCM', iv: bytes.slice(0, IV_BYTES), additionalData: wrapData(k.id, k.seq) },
      DATA_KEY,
      extractable,
      DATA_USAGES,
    )
  } catch (cause) {
    throw new SessionError(
      'session/wrong_passphrase',
      'the passphrase or key does not open this keyring (or its wrapped keys were altered)',
      { cause },
    )
  }
}

/** Checks a keyring read from storage or a server: hostile until checked. */
export function parseKeyring(v: unknown): SerializedKeyring {
  const o = v as Partial<SerializedKeyring> | null
  if (typeof o !== 'object' || o === null || o.format !== 'colloquy-keyring' || o.version !== 1)
    throw invalid('keyring: not a colloquy keyring of version 1')
  const kdf = o.kdf === null ? null : parseKdfParams(o.kdf, 'keyring.kdf')
  if (!Array.isArray(o.keys) || o.keys.length === 0 || o.keys.length > MAX_KEYS)
    throw invalid(`keyring.keys: must hold 1 to ${MAX_KEYS} keys`)
  const ids = new Set<string>()
  const seqs = new Set<number>()
  const keys = o.keys.map((k: Partial<WrappedKey> | null, i): WrappedKey => {
    const path = `keyring.keys[${i}]`
    if (typeof k !== 'object' || k === null) throw invalid(`${path}: must be an object`)
    if (!isKeyId(k.id) || ids.has(k.id)) throw invalid(`${path}.id: must be a distinct key id`)
    if (!Number.isSafeInteger(k.seq) || k.seq! < 0 || seqs.has(k.seq!))
      throw invalid(`${path}.seq: must be a distinct non-negative integer`)
    const bytes = typeof k.wrapped === 'string' ? decodeBase64(k.wrapped) : undefined
    // IV, 32 key bytes and a 16-byte tag.
    if (!bytes || bytes.length !== IV_BYTES + 32 + 16)
      throw invalid(`${path}.wrapped: not a wrapped data key`)
    ids.add(k.id)
    seqs.add(k.seq!)
    return { id: k.id, seq: k.seq!, wrapped: k.wrapped! }
  })
  return { format: 'colloquy-keyring', version: 1, kdf, keys }
}

/**
 * An unlocked keyring as another tab of the same origin receives it (BroadcastChannel): its
 * `CryptoKey`s are cloned by the browser and stay non-extractable, so no key byte is ever posted.
 */
export interface SharedKeyring {
  readonly kek: CryptoKey
  readonly stored: SerializedKeyring
  readonly keys: ReadonlyArray<readonly [string, CryptoKey]>
}

const isAesKey = (k: unknown): k is CryptoKey =>
  typeof CryptoKey !== 'undefined' && k instanceof CryptoKey && k.algorithm.name === 'AES-GCM'

/**
 * Unlocked keys: data keys as non-extractable `CryptoKey`s (script can use them, never read
 * them), the newest one sealing. Create one with `Keyring.create`, open a stored one with
 * `Keyring.open`; `serialize()` is what to store and what a server keeps.
 */
export class Keyring implements KeySource {
  /** Rotation and passphrase changes, one at a time: each rewrites the whole stored list. */
  private changing: Promise<unknown> = Promise.resolve()

  private constructor(
    private kek: CryptoKey,
    private stored: SerializedKeyring,
    private readonly keys: Map<string, CryptoKey>,
  ) {}

  /** A new keyring with one data key. `iterations` may only raise the KDF's cost. */
  static async create(secret: KeySecret, options: { iterations?: number } = {}): Promise<Keyring> {
    const kdf = 'passphrase' in (secret ?? {}) ? newKdfParams(options.iterations) : null
    const kek = await keyEncryptionKey(secret, kdf)
    const ring = new Keyring(kek, { format: 'colloquy-keyring', version: 1, kdf, keys: [] }, new Map())
    await ring.rotate()
    return ring
  }

  /** Opens a stored keyring; a wrong passphrase or key is `session/wrong_passphrase`, nothing opened. */
  static async open(serialized: unknown, secret: KeySecret): Promise<Keyring> {
    const stored = parseKeyring(serialized)
    const kek = await keyEncryptionKey(secret, stored.kdf)
    const keys = new Map<string, CryptoKey>()
    for (const k of stored.keys) keys.set(k.id, await unwrap(kek, k, false))
    return new Keyring(kek, stored, keys)
  }

  /** The same keys for another tab of this origin (see `SharedKeyring`). */
  share(): SharedKeyring {
    return { kek: this.kek, stored: this.serialize(), keys: [...this.keys] }
  }

  /** A keyring another tab shared (`share`), checked: hostile until then. */
  static adopt(shared: unknown): Keyring {
    const s = shared as Partial<SharedKeyring> | null
    if (typeof s !== 'object' || s === null || !isAesKey(s.kek) || !Array.isArray(s.keys))
      throw invalid('shared keyring: not a keyring')
    const stored = parseKeyring(s.stored)
    const keys = new Map<string, CryptoKey>()
    for (const pair of s.keys as unknown[]) {
      const [id, key] = Array.isArray(pair) ? (pair as unknown[]) : []
      if (
        typeof id !== 'string' ||
        !isAesKey(key) ||
        key.extractable ||
        !stored.keys.some((k) => k.id === id)
      )
        throw invalid('shared keyring: a key it does not list')
      keys.set(id, key)
    }
    if (keys.size !== stored.keys.length) throw invalid('shared keyring: keys missing')
    return new Keyring(s.kek, stored, keys)
  }

  /** The key new values are sealed with: the newest. */
  get currentKeyId(): string {
    return this.stored.keys.reduce((a, b) => (b.seq > a.seq ? b : a)).id
  }

  keyFor(id: string): CryptoKey | undefined {
    return this.keys.get(id)
  }

  has(id: string): boolean {
    return this.keys.has(id)
  }

  /** Ids of every data key, oldest first. */
  get keyIds(): string[] {
    return [...this.stored.keys].sort((a, b) => a.seq - b.seq).map((k) => k.id)
  }

  /** The keyring as stored: wrapped keys, salt and parameters; a fresh copy. */
  serialize(): SerializedKeyring {
    return structuredClone(this.stored)
  }

  /**
   * Starts a new data key for new writes; older keys stay to open what they sealed. Returns its
   * id. Store `serialize()` afterwards (before anything sealed with it leaves the device).
   */
  rotate(): Promise<string> {
    return this.exclusive(() => this.addKey())
  }

  private async addKey(): Promise<string> {
    if (this.stored.keys.length >= MAX_KEYS)
      throw invalid(`keyring: holds ${MAX_KEYS} keys, the most a stored keyring may hold`)
    const id = newKeyId()
    const seq = this.stored.keys.reduce((n, k) => Math.max(n, k.seq + 1), 0)
    // Generated extractable only to be wrapped; the key kept is the unwrapped, non-extractable one.
    const fresh = await crypto.subtle.generateKey(DATA_KEY, true, DATA_USAGES)
    const entry: WrappedKey = { id, seq, wrapped: await wrap(this.kek, fresh, id, seq) }
    const held = await unwrap(this.kek, entry, false)
    this.stored = { ...this.stored, keys: [...this.stored.keys, entry] }
    this.keys.set(id, held)
    return id
  }

  /**
   * Re-wraps every data key under a new secret (a fresh salt for a passphrase); no sealed value
   * changes. The current secret is checked first: a wrong one is `session/wrong_passphrase` and
   * nothing changes.
   */
  changePassphrase(
    current: KeySecret,
    next: KeySecret,
    options: { iterations?: number } = {},
  ): Promise<void> {
    return this.exclusive(() => this.rewrap(current, next, options))
  }

  private async rewrap(current: KeySecret, next: KeySecret, options: { iterations?: number }): Promise<void> {
    const oldKek = await keyEncryptionKey(current, this.stored.kdf)
    const kdf = 'passphrase' in (next ?? {}) ? newKdfParams(options.iterations) : null
    const newKek = await keyEncryptionKey(next, kdf)
    const keys: WrappedKey[] = []
    for (const k of this.stored.keys) {
      // Extractable only inside this loop, to be wrapped again at once.
      const raw = await unwrap(oldKek, k, true)
      keys.push({ id: k.id, seq: k.seq, wrapped: await wrap(newKek, raw, k.id, k.seq) })
    }
    this.kek = newKek
    this.stored = { format: 'colloquy-keyring', version: 1, kdf, keys }
  }

  private exclusive<T>(run: () => Promise<T>): Promise<T> {
    const result = this.changing.then(run)
    this.changing = result.catch(() => undefined)
    return result
  }
}
