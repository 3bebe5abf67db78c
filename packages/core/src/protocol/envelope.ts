import { SessionError } from '../model/errors.js'
import type { SequencedChange } from './messages.js'

/**
 * The pieces every check of a server's answer is made of: sequence numbers, checkpoints and
 * heads become a device's cursor, so NaN, a negative or fractional seq or a page that claims
 * more without moving would otherwise poison a stored checkpoint or spin a pull loop. The changes
 * inside are only seen to be objects here: core's validator checks each one where it is applied.
 */

export type Fields = Record<string, unknown>

export const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v)

export const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

/** The refusal of anything a server answers that is not the protocol. */
export const malformed = (what: string): SessionError =>
  new SessionError('session/invalid_request', `malformed server answer: ${what}`)

export function seqOf(v: unknown, what: string): number {
  if (!isSeq(v)) throw malformed(`${what} must be a non-negative integer`)
  return v
}

export function epochOf(v: unknown): string | undefined {
  if (v === undefined) return undefined
  if (typeof v !== 'string' || v.length > 256) throw malformed('epoch must be a short string')
  return v
}

/** Sequenced changes strictly increasing and above `after`; each change an object with a type. */
export function sequencedChanges(v: unknown, after: number, what = 'changes'): SequencedChange[] {
  if (!Array.isArray(v)) throw malformed(`${what} must be an array`)
  let last = after
  for (const [i, c] of v.entries()) {
    if (!isObject(c) || !isObject(c.change) || typeof c.change.type !== 'string')
      throw malformed(`${what}[${i}] must be { seq, change }`)
    const seq = seqOf(c.seq, `${what}[${i}].seq`)
    if (seq <= last) throw malformed(`${what}[${i}].seq ${seq} does not follow ${last}`)
    last = seq
  }
  return v as SequencedChange[]
}
