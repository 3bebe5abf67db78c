import type { JsonObject } from '../model/model.js'
import { invalid } from '../model/errors.js'
import { SEALED_METADATA_KEY } from './sealed-records.js'

/** What the app decides about encryption; everything not named here is sealed. */
export interface EncryptionPolicy {
  /**
   * Metadata keys the app or the server must read in clear (e.g. `owner`, the tenancy key a
   * server scopes sessions by). Their values are neither secret nor sealed; a server could change
   * them as it could before. Every other key, and its name, is sealed.
   */
  clearMetadataKeys?: readonly string[]
}

/** The policy's clear keys, checked once. */
export function clearKeysOf(policy: EncryptionPolicy | undefined): ReadonlySet<string> {
  const keys = policy?.clearMetadataKeys ?? []
  if (!Array.isArray(keys)) throw invalid('policy.clearMetadataKeys: must be an array of strings')
  for (const k of keys) {
    if (typeof k !== 'string' || k === SEALED_METADATA_KEY)
      throw invalid(`policy.clearMetadataKeys: ${JSON.stringify(k)} cannot be a clear key`)
  }
  return new Set(keys)
}

/** Splits metadata into its clear keys and the rest (to be sealed). */
export function splitMetadata(
  metadata: JsonObject,
  clear: ReadonlySet<string>,
): { clear: JsonObject; hidden: JsonObject } {
  if (Object.prototype.hasOwnProperty.call(metadata, SEALED_METADATA_KEY))
    throw invalid(`metadata.${SEALED_METADATA_KEY}: this key is reserved for sealed metadata`)
  const out = { clear: {} as JsonObject, hidden: {} as JsonObject }
  for (const [k, v] of Object.entries(metadata)) (clear.has(k) ? out.clear : out.hidden)[k] = v
  return out
}
