import { Keyring, parseKeyring, type KeySecret, type SerializedKeyring } from '@colloquy/core/crypto'
import { httpTransport, type HttpTransportOptions } from './transport.js'

// The wrapped keyring a server keeps for each principal (end-to-end encryption,
// docs/encryption.md): the first device stores it there, every other device fetches it and opens
// it with the passphrase. It holds wrapped keys only; what comes back is checked like any input.

/** The keyring the server keeps for the caller, checked (core's `parseKeyring`), or null. */
export async function fetchKeyring(options: HttpTransportOptions): Promise<SerializedKeyring | null> {
  const held = await httpTransport(options).getKeyring!()
  return held === null ? null : parseKeyring(held)
}

/**
 * Has the server keep `keyring` (its wrapped form) for the caller. Store it again after a
 * rotation or a passphrase change; the server refuses one that lacks a key it holds.
 */
export async function saveKeyring(options: HttpTransportOptions, keyring: Keyring): Promise<void> {
  await httpTransport(options).putKeyring!(keyring.serialize())
}

/**
 * The keyring of a device: the server's, opened with `secret` (a wrong passphrase is
 * `session/wrong_passphrase`), or, when the server keeps none yet, a new one, stored there.
 */
export async function openOrCreateKeyring(
  options: HttpTransportOptions,
  secret: KeySecret,
): Promise<Keyring> {
  const held = await fetchKeyring(options)
  if (held) return Keyring.open(held, secret)
  const keyring = await Keyring.create(secret)
  await saveKeyring(options, keyring)
  return keyring
}
