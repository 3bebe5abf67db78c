import { changeSession, type ReplicaChange } from '@colloquy/core'
import type { SequencedChange } from '@colloquy/core/protocol'
import { keyOf, keyed, type Coalesced } from './outbox.js'
import { outbox, serially, type Records, type Replication } from './state.js'

/**
 * Own echoes never win over newer own changes (see the README): what is in flight holds server
 * changes for its keys until its answer places it in the server's log, and what is not yet sent
 * shields its keys from server changes altogether.
 */

/** Marks a batch as in flight: its records, and the keys it sets. */
export function hold(s: Replication, batch: readonly Coalesced[]): void {
  for (const m of batch) {
    for (const id of m.ids) s.inflight.add(id)
    const k = keyed(m.change)
    if (k !== undefined) s.holding.set(k, (s.holding.get(k) ?? 0) + 1)
  }
}

/** A mutation answered: its key no longer waits, and where it landed (`seq`) supersedes what is older. */
export function placed(s: Replication, change: ReplicaChange, seq: number | undefined, sentIn: number): void {
  const k = keyed(change)
  if (k === undefined) return
  const n = (s.holding.get(k) ?? 1) - 1
  if (n > 0) s.holding.set(k, n)
  else s.holding.delete(k)
  if (seq !== undefined && sentIn === s.generation) s.landed.set(k, Math.max(s.landed.get(k) ?? 0, seq))
}

/**
 * After a push, answered or not. Not answered (the answer was lost, the push failed): what was
 * held is applied as it would have been without holding. The retry's answer guards what arrives
 * after it.
 */
export async function unhold(s: Replication): Promise<void> {
  s.inflight.clear()
  if (!s.holding.size) return
  s.holding.clear()
  await serially(s, async () => {
    const { list, keep } = release(s)
    if (list.length) await s.store.applyReplica(withoutPending(s, list, await outbox(s)), { policy: 'pull' })
    s.held = keep
  })
}

/**
 * Server changes minus those that a local change not yet sent supersedes: that change will
 * reach the server after them and come back. Changes already sent do not shield anything.
 */
export function withoutPending(
  s: Replication,
  changes: readonly SequencedChange[],
  records: Records,
): ReplicaChange[] {
  const pending = new Set<string>()
  const deleting = new Set<string>()
  for (const {
    key,
    value: { change: c },
  } of records) {
    // A local attachment change not yet acknowledged, sent or not (its bytes may still be on
    // their way): an older server record of the same attachment, or a whole list (a server
    // that sends lists), may not have it yet and must not undo it here.
    if (c.type === 'attachment' || c.type === 'detach') {
      pending.add(keyOf(c))
      pending.add(keyOf({ type: 'attachments', session_id: c.session_id, attachments: [] }))
      continue
    }
    if (s.inflight.has(key)) continue
    if (c.type === 'delete') deleting.add(c.session_id)
    else pending.add(keyOf(c))
  }
  return changes
    .map((sc) => sc.change)
    .filter((c) =>
      c.type === 'delete' ? true : deleting.has(changeSession(c)) ? false : !pending.has(keyOf(c)),
    )
}

/**
 * Held changes whose keys no longer wait for an answer (`list`): those not superseded by where
 * a mutation of ours landed, in log order. `keep`: the others still waiting, to become `held`
 * once `list` is written (a failed write leaves everything held).
 */
export function release(s: Replication): { list: SequencedChange[]; keep: SequencedChange[] } {
  const list: SequencedChange[] = []
  const keep: SequencedChange[] = []
  for (const h of s.held) {
    const k = keyed(h.change)!
    if (s.holding.has(k)) keep.push(h)
    else if (h.seq >= (s.landed.get(k) ?? 0)) list.push(h)
  }
  return { list, keep }
}
