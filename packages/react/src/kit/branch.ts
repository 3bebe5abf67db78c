import { branchOf, type SessionTree, type Store } from '@colloquy/core'
import { newestLeafUnder } from './newest-leaf.js'
import type { Selection } from './query.js'
import { sameItems } from './same-items.js'

/** A branch picker's model: "2 / 3" is `index: 1, count: 3`; an unknown entry is `-1 / 0`. */
export interface Branch {
  readonly index: number
  readonly count: number
  /** Sibling entry ids, oldest first. */
  readonly siblings: readonly string[]
  /** Show the previous / next sibling; nothing at either end. */
  prev(): Promise<void>
  next(): Promise<void>
  /** Show sibling `index`: the active leaf moves to the newest leaf under it. */
  select(index: number): Promise<void>
}

/**
 * Turns a session tree into the branch of one entry. The three actions are made once per
 * selection and read the newest tree when called, so a picker keeps one `Branch` object
 * until its position really changes.
 */
export function branchSelection(store: Store, session_id: string, entry_id: string): Selection<SessionTree | null, Branch> {
  let latest: SessionTree | null = null
  const position = (): { index: number; count: number; siblings: readonly string[] } =>
    latest ? branchOf(latest, entry_id) : { index: -1, count: 0, siblings: [] }

  const show = async (index: number): Promise<void> => {
    const tree = latest
    const { siblings, index: current } = position()
    if (!tree || index < 0 || index >= siblings.length) throw new RangeError(`no branch ${index} of ${siblings.length} at entry ${entry_id}`)
    if (index === current) return
    await store.setActiveLeaf({ session_id, entry_id: newestLeafUnder(tree, siblings[index]) })
  }
  const step = (delta: number) => async (): Promise<void> => {
    const { index, count } = position()
    if (index >= 0 && index + delta >= 0 && index + delta < count) await show(index + delta)
  }
  const prev = step(-1)
  const next = step(1)

  return {
    select(tree) {
      latest = tree
      return { ...position(), prev, next, select: show }
    },
    equal: (a, b) => a.index === b.index && a.count === b.count && a.select === b.select && sameItems(a.siblings, b.siblings),
  }
}
