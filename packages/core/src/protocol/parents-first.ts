/** What ordering needs of an entry: its id and its parent's. */
export interface Linked {
  readonly id: string
  readonly parent_id: string | null
}

/**
 * Entries ordered so that every parent comes before its children, nothing dropped: each tree
 * from a root (`parent_id` null) in turn, then each tree whose root's parent is not in the set
 * (a bulk import's later chunk, whose parents an earlier one brought), then, should the input
 * hold a cycle, what is left, in input order. Siblings keep their input order. Iterative: a
 * conversation is one chain thousands of entries deep.
 */
export function parentsFirst<E extends Linked>(entries: Iterable<E>): E[] {
  const all = [...entries]
  const ids = new Set(all.map((e) => e.id))
  const children = new Map<string, E[]>()
  for (const e of all) {
    if (e.parent_id === null || !ids.has(e.parent_id)) continue
    const list = children.get(e.parent_id)
    if (list) list.push(e)
    else children.set(e.parent_id, [e])
  }
  const out: E[] = []
  const placed = new Set<E>()
  const expanded = new Set<string>()
  const visit = (root: E): void => {
    const stack = [root]
    while (stack.length) {
      const e = stack.pop()!
      if (placed.has(e)) continue
      placed.add(e)
      out.push(e)
      // An id given twice has its children placed once, under the first.
      if (expanded.has(e.id)) continue
      expanded.add(e.id)
      const kids = children.get(e.id)
      if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i])
    }
  }
  for (const e of all) if (e.parent_id === null) visit(e)
  for (const e of all) if (e.parent_id !== null && !ids.has(e.parent_id)) visit(e)
  for (const e of all) visit(e)
  return out
}
