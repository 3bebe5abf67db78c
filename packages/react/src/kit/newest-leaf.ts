import type { SessionTree } from '@colloquy/core'

/**
 * Where switching to a sibling lands: from that sibling down, always into the newest child
 * (highest timestamp; on a tie the later one in children order) until a leaf. Then the reader
 * sees the latest conversation that continued from the branch they picked.
 */
export function newestLeafUnder(tree: SessionTree, entry_id: string): string {
  let id = entry_id
  for (;;) {
    const children = tree.children.get(id)
    if (!children || children.length === 0) return id
    let newest = children[0]
    for (const child of children) {
      if ((tree.entries.get(child)?.timestamp ?? -Infinity) >= (tree.entries.get(newest)?.timestamp ?? -Infinity)) newest = child
    }
    id = newest
  }
}
