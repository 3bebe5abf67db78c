import { SessionError } from '../model/errors.js'
import type { CheckedReplicaChange } from '../validation/checked-change.js'
import { isValidId } from '../validation/limits.js'
import { replicaChange as parseReplicaChange, parseSessionEntry } from '../validation/records.js'
import { isObject, malformed, seqOf } from './envelope.js'
import type { MutationId, PushMutation, PushResponse, PushResult } from './messages.js'

const refused = (text: string): SessionError => new SessionError('session/invalid_request', text)

export const isMutationId = (v: unknown): v is MutationId => Number.isSafeInteger(v) || isValidId(v)

/** A push request as checked: every change through core's validator. */
export interface CheckedPush {
  readonly client_id?: string
  readonly mutations: ReadonlyArray<PushMutation & { readonly change: CheckedReplicaChange }>
}

/**
 * `{ client_id?, mutations: [{ id, change }] }`, all checked before anything is applied (the
 * server's push, on both its routes). The changes come from core's validator
 * (`CheckedReplicaChange`), so `applyReplica` does not validate them again.
 */
export function checkPushRequest(body: unknown): CheckedPush {
  const { client_id, mutations } = checkPushEnvelope(body)
  const checked = mutations.map(checkPushMutation)
  return client_id === undefined ? { mutations: checked } : { client_id, mutations: checked }
}

/**
 * The two halves of `checkPushRequest`, for a server that checks a large push a slice at a time:
 * the envelope (`client_id`, a `mutations` array, unchecked) and then each mutation by its index.
 */
export function checkPushEnvelope(body: unknown): {
  readonly client_id?: string
  readonly mutations: readonly unknown[]
} {
  if (!isObject(body) || !Array.isArray(body.mutations)) throw refused('expected { mutations: [...] }')
  if (body.client_id !== undefined && !isValidId(body.client_id))
    throw refused('client_id: expected an id of at most 255 UTF-8 bytes')
  return body.client_id === undefined
    ? { mutations: body.mutations }
    : { client_id: body.client_id, mutations: body.mutations }
}

export function checkPushMutation(m: unknown, i: number): CheckedPush['mutations'][number] {
  const path = `mutations[${i}]`
  if (!isObject(m)) throw refused(`${path}: expected an object`)
  // The id is echoed back: an id like any other (a safe integer, or a string within the id bounds).
  if (!isMutationId(m.id))
    throw refused(`${path}.id: expected an integer or an id of at most 255 UTF-8 bytes`)
  return { id: m.id, change: parseReplicaChange(m.change, `${path}.change`) }
}

const STATUSES: readonly unknown[] = ['applied', 'unchanged', 'conflict', 'rejected']

/**
 * One result as the server words it: `applied` or `unchanged` (with the key's `seq`, if the
 * server gives one), `conflict` with the server's entry (core's validator checks it), or
 * `rejected` with the error's code and text.
 */
export function checkPushResult(v: unknown, what: string): PushResult {
  if (!isObject(v) || !isMutationId(v.id) || !STATUSES.includes(v.status))
    throw malformed(`${what} must be { id, status }`)
  if (v.seq !== undefined) {
    if (v.status !== 'applied' && v.status !== 'unchanged')
      throw malformed(`${what}.seq comes only with applied or unchanged`)
    seqOf(v.seq, `${what}.seq`)
  }
  if (v.status === 'conflict') {
    try {
      parseSessionEntry(v.current, `${what}.current`)
    } catch (e) {
      throw malformed(`${what}.current: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  if (v.status === 'rejected' && (typeof v.code !== 'string' || typeof v.message !== 'string'))
    throw malformed(`${what} must carry the error's code and message`)
  return v as unknown as PushResult
}

/** A push answer for the mutations `ids`: one result each, in their order. */
export function checkPushResponse(v: unknown, ids: readonly MutationId[]): PushResponse {
  if (!isObject(v) || !Array.isArray(v.results)) throw malformed('push answer must be { results: [...] }')
  if (v.results.length !== ids.length)
    throw malformed(`push answer has ${v.results.length} results for ${ids.length} mutations`)
  for (const [i, r] of v.results.entries()) {
    checkPushResult(r, `results[${i}]`)
    if ((r as PushResult).id !== ids[i])
      throw malformed(`results[${i}] must answer mutation ${JSON.stringify(ids[i])}`)
  }
  return v as unknown as PushResponse
}
