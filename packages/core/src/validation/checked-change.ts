import type { ReplicaChange } from '../model/replica-change.js'

declare const checked: unique symbol

/**
 * A replicated change the one validator (`parseReplicaChange`) produced: bounded, normalized and
 * frozen. `applyReplica` applies such a change without validating it again (a server validates
 * a push before it applies it), so the brand is backed at run time, not only by the type: only
 * objects the validator itself returned are recognized (by identity), and a copy, a cast or a
 * look-alike object built by a caller is validated as any other input.
 */
export type CheckedReplicaChange = ReplicaChange & { readonly [checked]: true }

const made = new WeakSet<object>()

/** The validator's last step (records.ts): freezes its result and remembers it as checked. */
export function markChecked(change: ReplicaChange): CheckedReplicaChange {
  made.add(Object.freeze(change))
  return change as CheckedReplicaChange
}

/** True only for a change the validator returned (never for a copy of one). */
export const isChecked = (change: unknown): change is CheckedReplicaChange =>
  typeof change === 'object' && change !== null && made.has(change)
