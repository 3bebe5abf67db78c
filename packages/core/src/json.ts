import type { JsonObject } from './model.js'
import { SessionError } from './errors.js'
import type { WorkMeter } from './work.js'

/** The refusal of a comparison the caller's budget cannot afford (a filter too large for the sessions it meets). */
export const tooCostly = (meter: WorkMeter): SessionError =>
  new SessionError('session/invalid_request', `the metadata filter compares more than ${meter.budget} values over these sessions (past the first of each): narrow it`)

const fail = (meter: WorkMeter): never => {
  throw tooCostly(meter)
}

/**
 * Deep JSON equality: the contract's "deeply equal JSON value" (4.3). With a `meter`, every value
 * compared inside `a` (its members, at any depth) costs a unit, paid before they are looked at,
 * and the comparison throws `tooCostly` when the budget cannot pay; comparing two scalars is free.
 */
export function jsonEqual(a: unknown, b: unknown, meter?: WorkMeter): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    if (meter && !meter.take(a.length)) fail(meter)
    return a.every((x, i) => jsonEqual(x, b[i], meter))
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  if (meter && !meter.take(ka.length)) fail(meter)
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual((a as JsonObject)[k], (b as JsonObject)[k], meter))
}

/**
 * Metadata subset-equality (contract 4.3): every key of the filter is present in the session's
 * metadata with an equal value. `{}` matches everything, a non-empty filter never matches a
 * session without metadata.
 */
export function metadataMatches(filter: JsonObject | null | undefined, metadata: JsonObject | undefined, meter?: WorkMeter): boolean {
  if (!filter) return true
  const keys = Object.keys(filter)
  if (keys.length === 0) return true
  if (!metadata) return false
  // With a meter, the keys after the first cost a unit each, paid once the first matched: a
  // session that fails on the first key costs one comparison, whatever the filter holds.
  return keys.every(
    (k, i) => (i !== 1 || !meter || meter.take(keys.length - 1) || fail(meter)) && Object.prototype.hasOwnProperty.call(metadata, k) && jsonEqual(filter[k], metadata[k], meter),
  )
}
