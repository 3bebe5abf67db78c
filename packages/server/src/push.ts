import {
  META_FIELDS, parseAttachmentMeta, parseSessionEntry, parseSessionMeta, SessionError, type MetaField, type ReplicaChange, type ReplicaResult, type SessionMeta,
} from '@colloquy/core'
import type { Principal } from './auth.js'
import { invalidRequest, tooLarge } from './errors.js'
import type { Service } from './rpc.js'

/** One client mutation: its outbox key (echoed in the result) and the replicated change. */
export interface PushMutation {
  readonly id: number | string
  readonly change: ReplicaChange
}

export type PushResult = { readonly id: number | string } & ReplicaResult

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown, path: string): string => {
  if (typeof v !== 'string') throw invalidRequest(`${path}: expected a string`)
  return v
}

function parseMeta(v: unknown, path: string): SessionMeta {
  const meta = parseSessionMeta(v, path)
  return meta.updated_at === undefined ? { ...meta, updated_at: meta.created_at } : meta
}

/** The meta fields a pushed meta change edited (the others are left as the server has them). */
function parseFields(v: unknown, path: string): MetaField[] {
  if (!Array.isArray(v) || !v.every((f) => (META_FIELDS as readonly unknown[]).includes(f))) {
    throw invalidRequest(`${path}: expected an array of ${META_FIELDS.join(', ')}`)
  }
  return v as MetaField[]
}

/** Validates one change with the core's parsers for metas and entries. */
export function parseChange(v: unknown, path: string): ReplicaChange {
  if (!isObject(v)) throw invalidRequest(`${path}: expected an object`)
  switch (v.type) {
    case 'meta':
      if (v.create != null && typeof v.create !== 'boolean') throw invalidRequest(`${path}.create: expected a boolean`)
      if (v.fields != null && !(Array.isArray(v.fields) && v.fields.every((f) => (META_FIELDS as readonly unknown[]).includes(f)))) {
        throw invalidRequest(`${path}.fields: expected a list of ${META_FIELDS.join(', ')}`)
      }
      return { type: 'meta', meta: parseMeta(v.meta, `${path}.meta`), ...(v.create === true && { create: true }), ...(v.fields != null && { fields: v.fields as MetaField[] }) }
    case 'entry': {
      const base = v.base_revision
      if (base != null && !(Number.isSafeInteger(base) && (base as number) >= 0)) throw invalidRequest(`${path}.base_revision: expected null or a non-negative integer`)
      return { type: 'entry', session_id: str(v.session_id, `${path}.session_id`), entry: parseSessionEntry(v.entry, `${path}.entry`), base_revision: (base as number | null | undefined) ?? null }
    }
    case 'leaf':
      if (v.entry_id != null && typeof v.entry_id !== 'string') throw invalidRequest(`${path}.entry_id: expected a string or null`)
      return { type: 'leaf', session_id: str(v.session_id, `${path}.session_id`), entry_id: (v.entry_id as string | null | undefined) ?? null }
    case 'delete':
      return { type: 'delete', session_id: str(v.session_id, `${path}.session_id`) }
    // The bytes never travel in a push: an attachment change is taken once they were uploaded.
    case 'attachment':
      return { type: 'attachment', session_id: str(v.session_id, `${path}.session_id`), attachment: parseAttachmentMeta(v.attachment, `${path}.attachment`) }
    case 'detach':
      return { type: 'detach', session_id: str(v.session_id, `${path}.session_id`), attachment_id: str(v.attachment_id, `${path}.attachment_id`) }
    default:
      throw invalidRequest(`${path}.type: expected one of meta, entry, leaf, delete, attachment, detach`)
  }
}

/** `{ mutations: [{ id, change }] }`, all checked before anything is applied. */
export function parsePush(body: unknown, maxBatch: number): PushMutation[] {
  if (!isObject(body) || !Array.isArray(body.mutations)) throw invalidRequest('expected { mutations: [...] }')
  if (body.mutations.length > maxBatch) throw tooLarge(`a push carries at most ${maxBatch} mutations, got ${body.mutations.length}`)
  return body.mutations.map((m: unknown, i) => {
    const path = `mutations[${i}]`
    if (!isObject(m)) throw invalidRequest(`${path}: expected an object`)
    if (typeof m.id !== 'number' && typeof m.id !== 'string') throw invalidRequest(`${path}.id: expected a number or a string`)
    return { id: m.id, change: parseChange(m.change, `${path}.change`) }
  })
}

const sessionOf = (c: ReplicaChange): string => (c.type === 'meta' ? c.meta.session_id : c.session_id)

// Plain text, as the core's own rejections carry it (the code is a field of its own).
const rejected = (e: SessionError): ReplicaResult => ({ status: 'rejected', code: e.code, message: e.message.replace(`${e.code}: `, '') })

/**
 * Applies a client's mutations in order with the core's replica rules (`applyReplica`, policy
 * `push`): one result per mutation. With tenancy, a session's metas carry the caller as owner,
 * and changes to sessions the caller does not own answer as for an unknown session.
 */
export async function push(service: Service, principal: Principal | undefined, mutations: readonly PushMutation[]): Promise<PushResult[]> {
  const { store, tenancy } = service
  const results: Array<ReplicaResult | undefined> = new Array(mutations.length)
  const admitted: Array<{ at: number; change: ReplicaChange }> = []
  const releases: Array<() => void> = []
  for (let at = 0; at < mutations.length; at++) {
    let change = mutations[at].change
    if (principal !== undefined) {
      const id = sessionOf(change)
      const standing = tenancy.standing(principal, id)
      // Only a meta marked `create` may bring a session into existence (for its caller).
      if (change.type === 'meta' && (standing === 'own' || (standing === 'absent' && change.create))) {
        try {
          change = { ...change, meta: { ...change.meta, metadata: tenancy.stamp(principal, change.meta.metadata) } }
        } catch (e) {
          results[at] = rejected(e as SessionError)
          continue
        }
        if (standing === 'absent') releases.push(tenancy.reserve(principal, id))
      } else if (standing !== 'own') {
        // The core's push answers for a session it does not hold.
        results[at] = change.type === 'delete' ? { status: 'unchanged' } : rejected(new SessionError('session/not_found', `session ${id} not found`))
        continue
      }
    }
    admitted.push({ at, change })
  }
  try {
    if (admitted.length) {
      const applied = await store.applyReplica(admitted.map((a) => a.change), { policy: 'push' })
      admitted.forEach((a, i) => (results[a.at] = applied[i]))
    }
  } finally {
    for (const release of releases) release()
  }
  return mutations.map((m, i) => ({ id: m.id, ...results[i]! }))
}
