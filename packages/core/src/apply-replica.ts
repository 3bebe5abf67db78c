import type { OpContext } from './context.js'
import type { Engine } from './engine.js'
import { SessionError } from './startup.js'
import { isChecked } from './checked-change.js'
import { replicaChange } from './records.js'
import { applyReplica, type ReplicaChange, type ReplicaResult } from './replica.js'
import type { ApplyReplicaOptions } from './store.js'

/** `store.applyReplica`: fetched on first use, as only sync clients and servers call it. */
export function replicate(
  engine: Engine,
  ctx: OpContext,
  changes: readonly ReplicaChange[],
  { policy, source = 'remote', side = [], guard }: ApplyReplicaOptions,
): Promise<ReplicaResult[]> {
  // Replicated changes pass the same validator as requests (ids, names, depth): a hostile
  // server or client is refused before anything is written. A change that validator already
  // returned (a server parses a push first) is taken as it is: it is frozen, and only the
  // validator's own results are recognized.
  try {
    if (!Array.isArray(changes)) throw new SessionError('session/invalid_request', 'changes: expected an array')
    changes = changes.map((c, i) => (isChecked(c) ? c : replicaChange(c, `changes[${i}]`)))
  } catch (e) {
    return Promise.reject(e)
  }
  const sessions = [...new Set(changes.map((c) => (c.type === 'meta' ? c.meta.session_id : c.session_id)))]
  return engine.submitInternal(
    sessions,
    (d) => {
      const results = changes.map((c) => (guard && guard(c, d.head(c.type === 'meta' ? c.meta.session_id : c.session_id))) || applyReplica(d, c, policy, ctx))
      d.side.push(...side)
      return results
    },
    source,
  )
}
