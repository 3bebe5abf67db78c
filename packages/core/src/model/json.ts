import type { JsonObject } from './model.js'

/**
 * Deep JSON equality: the contract's "deeply equal JSON value" (4.3). Plain loops, not `every`
 * with a closure: a server's list filter compares values by the hundred thousand, and a closure
 * per level costs several times the comparison before V8 optimizes it (S6).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !jsonEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  for (const k of ka)
    if (!Object.prototype.hasOwnProperty.call(b, k) || !jsonEqual((a as JsonObject)[k], (b as JsonObject)[k]))
      return false
  return true
}

/**
 * Metadata subset-equality (contract 4.3): every key of the filter is present in the session's
 * metadata with an equal value. `{}` matches everything, a non-empty filter never matches a
 * session without metadata.
 */
export function metadataMatches(
  filter: JsonObject | null | undefined,
  metadata: JsonObject | undefined,
): boolean {
  if (!filter) return true
  const keys = Object.keys(filter)
  if (keys.length === 0) return true
  if (!metadata) return false
  return keys.every(
    (k) => Object.prototype.hasOwnProperty.call(metadata, k) && jsonEqual(filter[k], metadata[k]),
  )
}
