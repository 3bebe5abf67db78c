import type { OpContext } from '../model/context.js'
import type { Engine } from '../engine/engine.js'
import { SessionError } from '../model/errors.js'
import { isChecked } from '../validation/checked-change.js'
import { replicaChange } from '../validation/records.js'
import type { ChangeSource } from '../engine/changes.js'
import type { ReplicaChange, ReplicaPolicy, ReplicaResult } from '../model/replica-change.js'
import { changeSession } from '../model/replica-change.js'
import type { SessionHead, SideWrite } from '../storage/seam.js'
import { applyReplica } from './replica.js'

export interface ApplyReplicaOptions {
  policy: ReplicaPolicy
  /**
   * Checked in the commit for each change, on its session's head as read under its lock:
   * a result settles that change with it, nothing written for it.
   */
  guard?: (change: ReplicaChange, head: SessionHead | undefined) => ReplicaResult | undefined
  /** `remote` (default) for changes that came from elsewhere; `local` ones are recorded for push. */
  source?: ChangeSource
  side?: readonly SideWrite[]
  /**
   * Called after each change is applied; a promise it returns is awaited before the next, inside
   * the one transaction of all the changes (a server lets other requests run between the slices
   * of a large push). The changes still commit together or not at all, and nothing of them is
   * seen before they do.
   */
  turn?: () => Promise<void> | undefined
}

/** `store.applyReplica`: fetched on first use, as only sync clients and servers call it. */
export function replicate(
  engine: Engine,
  ctx: OpContext,
  changes: readonly ReplicaChange[],
  { policy, source = 'remote', side = [], guard, turn }: ApplyReplicaOptions,
): Promise<ReplicaResult[]> {
  // Replicated changes pass the same validator as requests (ids, names, depth): a hostile
  // server or client is refused before anything is written. A change that validator already
  // returned (a server parses a push first) is taken as it is: it is frozen, and only the
  // validator's own results are recognized.
  try {
    if (!Array.isArray(changes))
      throw new SessionError('session/invalid_request', 'changes: expected an array')
    changes = changes.map((c, i) => (isChecked(c) ? c : replicaChange(c, `changes[${i}]`)))
  } catch (e) {
    return Promise.reject(e)
  }
  const sessions = [...new Set(changes.map(changeSession))]
  return engine.submitInternal(
    sessions,
    (d) => {
      const apply = (c: ReplicaChange): ReplicaResult =>
        (guard && guard(c, d.head(changeSession(c)))) || applyReplica(d, c, policy, ctx)
      if (!turn) {
        const results = changes.map(apply)
        d.side.push(...side)
        return results
      }
      return (async () => {
        const results: ReplicaResult[] = []
        for (const c of changes) {
          results.push(apply(c))
          const next = turn()
          if (next) await next
        }
        d.side.push(...side)
        return results
      })()
    },
    source,
  )
}
