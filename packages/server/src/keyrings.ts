import { createHash } from 'node:crypto'
import type { Store } from '@colloquy/core'
import { parseKeyring, type SerializedKeyring } from '@colloquy/core/crypto'
import { HttpError } from './errors.js'

// Each principal's wrapped keyring (end-to-end encryption, docs/encryption.md), kept so a new
// device can fetch it and open it with the passphrase. It holds wrapped keys only, never a usable
// one: the server could not open a thing with it. Kept as side records of the server's store, in
// the same transactions and files (or tables) as everything else, on every storage.

/** The side store keyrings are kept in. */
const STORE = 'keyrings'
/** The largest keyring body taken: a keyring of the most keys core allows is far below it. */
export const MAX_KEYRING_BYTES = 64 * 1024

/** A principal's key in the side store: bounded and storable whatever the principal's name holds. */
const keyOf = (principal: string): string => createHash('sha256').update(principal, 'utf8').digest('hex')

/** The keyring `principal` keeps here, or null. */
export async function getKeyring(store: Store, principal: string): Promise<SerializedKeyring | null> {
  const key = keyOf(principal)
  const held = (await store.storage.sideRecords?.(STORE))?.find((r) => r.key === key)
  return held ? parseKeyring(held.value) : null
}

/**
 * Keeps `value` (checked with core's `parseKeyring`) as `principal`'s keyring. A keyring replaces
 * the one held only if it holds every key that one does (a rotation adds a key, a passphrase
 * change re-wraps the same ones): another device's fresh keyring cannot silently take the place
 * of the one that sealed what is stored (409).
 */
export async function putKeyring(
  store: Store,
  principal: string,
  value: unknown,
  bytes: number,
): Promise<void> {
  if (bytes > MAX_KEYRING_BYTES)
    throw new HttpError(413, 'session/invalid_request', `a keyring is at most ${MAX_KEYRING_BYTES} bytes`)
  const keyring = parseKeyring(value)
  if (!store.storage.sideRecords) throw new HttpError(404, 'http/not_found', 'this server keeps no keyrings')
  const held = await getKeyring(store, principal)
  if (held) {
    const ids = new Set(keyring.keys.map((k) => k.id))
    const lost = held.keys.filter((k) => !ids.has(k.id))
    if (lost.length)
      throw new HttpError(
        409,
        'session/invalid_request',
        `the keyring held here has keys this one lacks (${lost.map((k) => k.id).join(', ')}): fetch it, open it and change it rather than replacing it`,
      )
  }
  await store.applyReplica([], {
    policy: 'push',
    side: [{ store: STORE, key: keyOf(principal), value: keyring as never }],
  })
}
