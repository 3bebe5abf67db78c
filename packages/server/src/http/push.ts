import {
  changeSession,
  SessionError,
  type ReplicaChange,
  type ReplicaResult,
  type SessionHead,
} from '@colloquy/core'
import {
  checkPushEnvelope,
  checkPushMutation,
  type PushMutation,
  type PushResult,
  type CheckedPush,
} from '@colloquy/core/protocol'
import { quotaOwner, type Scope } from './access.js'
import { tooLarge } from '../errors.js'
import type { Service } from './rpc.js'
import { nextTurn } from '../work.js'

export type { PushMutation, PushResult }

type CheckedMutation = CheckedPush['mutations'][number]

/** The mutations of a push body (the protocol's envelope check), within `maxBatch`. */
function mutationsOf(body: unknown, maxBatch: number): readonly unknown[] {
  const { mutations } = checkPushEnvelope(body)
  if (mutations.length > maxBatch)
    throw tooLarge(`a push carries at most ${maxBatch} mutations, got ${mutations.length}`)
  return mutations
}

/**
 * `{ mutations: [{ id, change }] }`, all checked before anything is applied, by the protocol's
 * one check (`@colloquy/core/protocol`, the client's too); more than `maxBatch` is a 413.
 */
export function parsePush(body: unknown, maxBatch: number): CheckedMutation[] {
  return mutationsOf(body, maxBatch).map(checkPushMutation)
}

/**
 * Mutations checked (`parsePushInSlices`) or applied to the engine (`push`) between two turns of
 * the event loop: a few milliseconds of a loaded 2-core machine.
 */
const MUTATIONS_PER_TURN = 64

/** For the core's `applyReplica`: a turn of the event loop every `MUTATIONS_PER_TURN` changes. */
function everyFewChanges(): () => Promise<void> | undefined {
  let n = 0
  return () => (++n % MUTATIONS_PER_TURN === 0 ? nextTurn() : undefined)
}

/**
 * `parsePush`, letting other requests run every `MUTATIONS_PER_TURN` mutations: checking a full
 * batch (1,000 mutations, 4 MiB) is never one turn of the event loop. Nothing is applied before
 * all are checked, so a bad mutation still refuses the whole push.
 */
export async function parsePushInSlices(body: unknown, maxBatch: number): Promise<CheckedMutation[]> {
  const raw = mutationsOf(body, maxBatch)
  const out: CheckedMutation[] = new Array(raw.length)
  for (let i = 0; i < raw.length; i++) {
    if (i > 0 && i % MUTATIONS_PER_TURN === 0) await nextTurn()
    out[i] = checkPushMutation(raw[i], i)
  }
  return out
}

/**
 * A result with its log position, keys in the same order as `{ ...r, seq }`. Object.assign, not
 * a spread: Node 20's V8 copies `{ ...r }` on a slow path (~0.4 µs, against ~0.05), once per
 * applied mutation. `r` is the core's result, whose keys are its own. (A spread after other
 * keys, as in `{ id, ...r }`, takes the fast path.)
 */
const withSeq = (r: ReplicaResult, seq: number): ReplicaResult & { seq: number } =>
  Object.assign({}, r, { seq })

/** A result whose change is in the log now (this push's, or an identical one before it). */
const landed = (r: ReplicaResult): boolean => r.status === 'applied' || r.status === 'unchanged'

// Plain text, as the core's own rejections carry it (the code is a field of its own).
const rejected = (e: SessionError): ReplicaResult => ({
  status: 'rejected',
  code: e.code,
  message: e.message.replace(`${e.code}: `, ''),
})

/**
 * Applies a client's mutations in order with the core's replica rules (`applyReplica`, policy
 * `push`): one result per mutation. With tenancy, a session's metas carry the caller as owner,
 * and changes to sessions the caller does not own answer as for an unknown session.
 */
export async function push(
  service: Service,
  scope: Scope,
  mutations: readonly PushMutation[],
  bytes = 0,
): Promise<PushResult[]> {
  const { store, tenancy } = service
  const results: Array<(ReplicaResult & { seq?: number }) | undefined> = new Array(mutations.length)
  const admitted: Array<{ at: number; change: ReplicaChange }> = []
  const releases: Array<() => void> = []
  // The sessions' metas, read from the storage where the store holds only a working set: the
  // standings below are decided (and ids reserved) in one turn after this read.
  const metas =
    scope.kind === 'owner' || service.usage
      ? await tenancy.metas(mutations.map((m) => changeSession(m.change)))
      : undefined
  for (let at = 0; at < mutations.length; at++) {
    let change = mutations[at].change
    if (scope.kind === 'owner') {
      const principal = scope.owner
      const id = changeSession(change)
      const standing = tenancy.standingOf(principal, id, metas!.get(id))
      // Only a meta marked `create` may bring a session into existence (for its caller).
      if (change.type === 'meta' && (standing === 'own' || (standing === 'absent' && change.create))) {
        try {
          change = {
            ...change,
            meta: { ...change.meta, metadata: tenancy.stamp(principal, change.meta.metadata) },
          }
        } catch (e) {
          results[at] = rejected(e as SessionError)
          continue
        }
        if (standing === 'absent') releases.push(tenancy.reserve(principal, id))
      } else if (standing !== 'own') {
        // The core's push answers for a session it does not hold.
        results[at] =
          change.type === 'delete'
            ? { status: 'unchanged' }
            : rejected(new SessionError('session/not_found', `session ${id} not found`))
        continue
      }
    }
    admitted.push({ at, change })
  }
  // Against the caller's quotas: the body's size, and every session it creates.
  let quota = (): void => {}
  if (service.usage && admitted.length) {
    const creates = new Set(
      admitted
        .filter((a) => a.change.type === 'meta' && a.change.create && !metas!.get(changeSession(a.change)))
        .map((a) => changeSession(a.change)),
    )
    try {
      quota = await service.usage.admit(quotaOwner(scope), bytes, creates.size)
    } catch (e) {
      for (const release of releases) release()
      throw e
    }
  }
  try {
    if (admitted.length) {
      // The standings above are this instance's view; in the commit, under each session's lock,
      // a session found owned by someone else (created on another instance meanwhile) answers
      // as an unknown one, nothing written.
      const guard =
        scope.kind === 'all'
          ? undefined
          : (c: ReplicaChange, head: SessionHead | undefined): ReplicaResult | undefined =>
              !head || tenancy.owns(scope.owner, head.meta.metadata)
                ? undefined
                : c.type === 'delete'
                  ? { status: 'unchanged' }
                  : rejected(new SessionError('session/not_found', `session ${changeSession(c)} not found`))
      const changes = admitted.map((a) => a.change)
      // Applied in slices inside the one transaction (a full batch is tens of milliseconds of
      // the engine's work): other principals' requests run between them, and the push still
      // commits whole or not at all, seen by nobody before it does.
      const applied = await store.applyReplica(changes, { policy: 'push', guard, turn: everyFewChanges() })
      // Read after the commit: the newest record of each key is this push's or a later one, so
      // a client drops only server changes older than its own (see the sync README).
      const kept: ReplicaChange[] = []
      for (let i = 0; i < applied.length; i++) if (landed(applied[i])) kept.push(changes[i])
      const seqs = service.changes && kept.length ? await service.changes.positions(kept) : []
      for (let i = 0, n = 0; i < admitted.length; i++) {
        const seq = landed(applied[i]) ? seqs[n++] : undefined
        results[admitted[i].at] = seq === undefined ? applied[i] : withSeq(applied[i], seq)
      }
    }
  } finally {
    quota()
    for (const release of releases) release()
  }
  return mutations.map((m, i) => ({ id: m.id, ...results[i]! }))
}
