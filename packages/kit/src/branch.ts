import type { BranchPosition, Store } from '@colloquy/core'
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
 * Turns core's `branch$` position into a picker. The three actions are made once per selection
 * and read the newest position when called, so a picker keeps one `Branch` object until its
 * position really changes.
 */
export function branchSelection(
  store: Store,
  session_id: string,
  entry_id: string,
): Selection<BranchPosition | null, Branch> {
  let latest: BranchPosition = { index: -1, count: 0, siblings: [] }

  const show = async (index: number): Promise<void> => {
    const { siblings, index: current } = latest
    if (index < 0 || index >= siblings.length)
      throw new RangeError(`no branch ${index} of ${siblings.length} at entry ${entry_id}`)
    if (index === current) return
    await store.selectBranch({ session_id, entry_id: siblings[index] })
  }
  const step = (delta: number) => async (): Promise<void> => {
    const { index, count } = latest
    if (index >= 0 && index + delta >= 0 && index + delta < count) await show(index + delta)
  }
  const prev = step(-1)
  const next = step(1)

  return {
    select(position) {
      latest = position ?? { index: -1, count: 0, siblings: [] }
      return { ...latest, prev, next, select: show }
    },
    equal: (a, b) =>
      a.index === b.index &&
      a.count === b.count &&
      a.select === b.select &&
      sameItems(a.siblings, b.siblings),
  }
}
