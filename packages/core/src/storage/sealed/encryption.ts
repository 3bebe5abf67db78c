import { deleteDB } from 'idb'
import { searchDatabasesOf } from '../idb/search-databases.js'
import { SessionError, invalid } from '../../model/errors.js'
import { Keyring, parseKeyring, type SerializedKeyring } from '../../crypto/keyring.js'
import type { KeySecret } from '../../crypto/kdf.js'
import type { EncryptionPolicy } from '../../crypto/policy.js'
import type { Storage } from '../seam.js'
import { lockedError, sealedStorage } from './sealed-storage.js'
import { ENCRYPTING_KEY, encryptInPlace } from './encrypt-in-place.js'
import { IdleLock, checkLockAfter } from './idle-lock.js'

// An encrypted store's keys over its storage: the keyring kept wrapped in the storage's `kv`
// records, the sealing wrapper over the storage, lock and unlock, and the same across the tabs of
// one origin (a BroadcastChannel of its own beside the commit relay: a lock must reach every tab
// whatever the relay's state).

/** `createStore({ encryption })`: what unlocks the store, and what stays clear. */
export type EncryptionOptions = KeySecret & {
  /** Metadata keys kept clear (see `EncryptionPolicy`). */
  policy?: EncryptionPolicy
  /** PBKDF2 iterations for a new keyring; at least (and by default) 600,000. */
  iterations?: number
  /**
   * A store written in clear is encrypted in place when first opened with encryption; this is
   * told how many sessions are sealed so far.
   */
  onEncryptProgress?: (sessions: number) => void
  /**
   * Locks the store, in every tab, once no tab has used it for this many ms (at least 100), as
   * `store.lock()` does. Use is a call of the store's functions by the app, or `store.touch()`
   * (wire it to keyboard and pointer input); replication and live queries updating are not.
   * Give every tab the same value: a tab opened without it tells the others nothing of its use.
   * Default: never.
   */
  lockAfter?: number
}

/** The `kv` key of the wrapped keyring (clear: it holds no usable key). */
export const KEYRING_KEY = 'colloquy:keyring'

/** A lock, an unlock's keys, or when the store was last used, from another tab. */
type TabMessage = { readonly lock: true } | { readonly keys: unknown } | { readonly used: number }

export interface Encryption {
  /** The sealing storage over the one given. */
  readonly storage: Storage
  /** The unlocked keyring; null while locked. */
  readonly keyring: Keyring | null
  /**
   * An attachment's bytes as kept at rest, sealed and not opened (the chunked layout of the
   * wire, or the single envelope of before): what sync sends when it seals with this store's
   * keys, straight from the storage's Blob. Undefined when the storage keeps none.
   */
  sealedBytes(session_id: string, attachment_id: string): Promise<Blob | undefined>
  /** Drops the keys here and in every tab (`local`: here only, for a lock another tab sent). */
  lock(local?: boolean): void
  unlock(secret: KeySecret): Promise<void>
  changePassphrase(current: KeySecret, next: KeySecret): Promise<void>
  /** Told when another tab locks (true) or unlocks (false) this store. */
  onRemote?: (locked: boolean) => void
  /** A use of the store in this tab (with `lockAfter`: counted against inactivity). */
  used(): void
  /** Told when `lockAfter` ms passed without use in any tab: lock the store. */
  onIdle?: () => void
  close(): void
}

const checkSecret = (s: unknown, path: string): KeySecret => {
  const o = s as { passphrase?: unknown; key?: unknown } | null
  if (typeof o === 'object' && o !== null) {
    if (typeof o.passphrase === 'string' && o.passphrase.length > 0) return { passphrase: o.passphrase }
    if (typeof CryptoKey !== 'undefined' && o.key instanceof CryptoKey) return { key: o.key }
  }
  throw invalid(`${path}: expected { passphrase } (a non-empty string) or { key } (a CryptoKey)`)
}

const sideOnly = (key: string, value: unknown) => async () => ({
  deleted: new Set<string>(),
  heads: new Map(),
  entries: new Map(),
  side: [{ store: 'kv', key, value }],
})

async function storedKeyring(inner: Storage): Promise<{ ring?: SerializedKeyring; encrypting: boolean }> {
  if (!inner.sideRecords)
    throw invalid(`encryption: storage ${inner.name} keeps no side records for its keyring`)
  const kv = await inner.sideRecords('kv')
  const ring = kv.find((r) => r.key === KEYRING_KEY)?.value
  return {
    ring: ring === undefined ? undefined : parseKeyring(ring),
    encrypting: kv.some((r) => r.key === ENCRYPTING_KEY),
  }
}

/** Whether the storage holds any session. */
async function holdsSessions(inner: Storage): Promise<boolean> {
  if (inner.paged) return (await inner.paged.page({ order: 'created_asc', limit: 1 })).length > 0
  return (await inner.open()).length > 0
}

/**
 * Opens (or creates, on first open) the keyring of the store on `inner`, and returns the sealing
 * storage over it. A wrong passphrase or key is `session/wrong_passphrase` before anything is
 * read or written. A store holding sessions in clear is encrypted in place first (resumably).
 */
export async function openEncryption(inner: Storage, options: EncryptionOptions): Promise<Encryption> {
  const secret = checkSecret(options, 'encryption')
  const lockAfter = checkLockAfter(options.lockAfter)
  const policy = options.policy
  const found = await storedKeyring(inner)
  const stored = found.ring
  let encrypting = found.encrypting
  let keyring: Keyring
  if (stored) keyring = await Keyring.open(stored, secret)
  else {
    keyring = await Keyring.create(secret, {
      ...(options.iterations !== undefined && { iterations: options.iterations }),
    })
    encrypting = await holdsSessions(inner)
    // One transaction: a crash after it reopens with this keyring and the marker, and resumes.
    await inner.transact(async () => ({
      deleted: new Set<string>(),
      heads: new Map(),
      entries: new Map(),
      side: [
        { store: 'kv', key: KEYRING_KEY, value: keyring.serialize() },
        ...(encrypting ? [{ store: 'kv', key: ENCRYPTING_KEY, value: true }] : []),
      ],
    }))
  }
  if (encrypting) {
    // A search index written while the store was clear holds every message's words: it goes
    // first (again on a resumed run), and an index enabled later is built over the sealed store.
    await deleteClearIndexes(inner.name)
    await encryptInPlace(inner, keyring, policy, options.onEncryptProgress)
  }

  let held: Keyring | null = keyring
  const storage = sealedStorage(inner, {
    keys: () => {
      if (!held) throw lockedError()
      return held
    },
    ...(policy && { policy }),
  })
  const channel =
    typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel(`colloquy-keys:${inner.name}`)
  const post = (m: TabMessage): void => {
    try {
      channel?.postMessage(m)
    } catch {
      // A runtime that cannot clone a CryptoKey (Node's channel) has no other tab to tell.
    }
  }
  const idle =
    lockAfter === undefined
      ? undefined
      : new IdleLock(
          lockAfter,
          (used) => post({ used }),
          () => enc.onIdle?.(),
        )
  const enc: Encryption = {
    storage,
    get keyring() {
      return held
    },
    // Ciphertext only: readable while locked, and no key is used to read it.
    sealedBytes: async (session_id, attachment_id) => inner.attachmentBytes?.(session_id, attachment_id),
    lock(local = false) {
      held = null
      idle?.stop()
      if (!local) post({ lock: true })
    },
    async unlock(secret) {
      const { ring } = await storedKeyring(inner)
      if (!ring) throw new SessionError('session/storage', 'the keyring of this store is gone')
      held = await Keyring.open(ring, checkSecret(secret, 'unlock'))
      idle?.arm()
      post({ keys: held.share() })
    },
    async changePassphrase(current, next) {
      const ring = held
      if (!ring) throw lockedError()
      const before = ring.serialize()
      await ring.changePassphrase(checkSecret(current, 'current'), checkSecret(next, 'next'))
      try {
        await inner.transact(sideOnly(KEYRING_KEY, ring.serialize()))
      } catch (e) {
        // Not stored: the keyring in memory goes back to what the disk holds.
        held = await Keyring.open(before, checkSecret(current, 'current')).catch(() => null)
        throw e
      }
      post({ keys: ring.share() })
    },
    used: idle ? () => idle.used() : () => {},
    close() {
      idle?.stop()
      channel?.close()
    },
  }
  if (channel)
    channel.onmessage = (event: MessageEvent<unknown>) => {
      const m = event.data as Partial<{ lock: unknown; keys: unknown; used: unknown }> | null
      if (typeof m !== 'object' || m === null) return
      if ('used' in m) idle?.told(m.used)
      else if (m.lock === true) {
        if (!held) return
        enc.lock(true)
        enc.onRemote?.(true)
      } else if ('keys' in m) {
        let ring: Keyring
        try {
          ring = Keyring.adopt(m.keys)
        } catch {
          return
        }
        const was = held
        held = ring
        if (!was) {
          idle?.arm()
          enc.onRemote?.(false)
        }
      }
    }
  return enc
}

/** Deletes the search index databases beside an IndexedDB store's (none elsewhere). */
async function deleteClearIndexes(storageName: string): Promise<void> {
  const name = /^indexeddb:(.*)$/.exec(storageName)?.[1]
  if (name === undefined || typeof indexedDB === 'undefined') return
  await Promise.all(searchDatabasesOf(name).map((db) => deleteDB(db)))
}
