import type { SessionEntry } from '@colloquy/core'

interface Node {
  parent: string | null
  entries: SessionEntry[]
}

/** A node whose parent chain leads to a key that is neither a node nor an alias. */
export interface MissingParent {
  key: string
  /** The parent the node names (maybe an alias) … */
  parent: string
  /** … and the unknown key its chain ends at (the file starts after it), or a loop member. */
  missing: string
}

/**
 * Builds one Colloquy entry tree from a format's own records. Each record becomes a *node*
 * holding a short chain of entries (an assistant turn and the results of its calls, say);
 * a child of a node hangs off the node's last entry. Records that are not entries (progress
 * ticks, bookkeeping) become *aliases*: anything naming them as parent attaches to what they
 * stand for. Parents are resolved only in `build()`, so records may arrive in any order.
 */
export class TreeBuilder {
  private readonly nodes = new Map<string, Node>()
  private readonly aliases = new Map<string, string | null>()

  /** Adds a node; `entries` is its chain in order (their `parent_id`s are set by `build`). */
  node(key: string, parent: string | null, entries: SessionEntry[]): void {
    if (entries.length === 0) this.aliases.set(key, parent)
    else this.nodes.set(key, { parent, entries })
  }

  /** `key` is not an entry: children naming it attach to `target` (a key, or root). */
  alias(key: string, target: string | null): void {
    if (!this.nodes.has(key)) this.aliases.set(key, target)
  }

  has(key: string): boolean {
    return this.nodes.has(key) || this.aliases.has(key)
  }

  /** The entries of a node, to append to or amend before `build`. */
  entries(key: string): SessionEntry[] | undefined {
    return this.nodes.get(key)?.entries
  }

  /** The node a key stands for: a node key, `null` for root, `undefined` when unknown. */
  resolve(key: string | null): string | null | undefined {
    // Called once per record: a step budget instead of a visited set keeps it allocation-free.
    let k: string | null = key
    for (let steps = this.aliases.size; k !== null && !this.nodes.has(k); steps--) {
      if (steps < 0 || !this.aliases.has(k)) return undefined
      k = this.aliases.get(k) ?? null
    }
    return k
  }

  /** The id of the last entry a key stands for (where its children attach), if any. */
  tailOf(key: string | null): string | null | undefined {
    const k = this.resolve(key)
    return k === null || k === undefined ? k : this.nodes.get(k)!.entries.at(-1)!.id
  }

  /**
   * Sets every entry's parent and returns them in insertion order. A node whose parent is
   * unknown becomes a root (reported to `onMissing`); a parent loop is cut the same way.
   */
  build(onMissing?: (m: MissingParent) => void): SessionEntry[] {
    const out: SessionEntry[] = []
    const parentNode = new Map<string, string | null>()
    for (const [key, node] of this.nodes) {
      let p = node.parent === null ? null : this.resolve(node.parent)
      if (p === undefined) {
        onMissing?.({ key, parent: node.parent!, missing: this.unknownIn(node.parent!) })
        p = null
      }
      if (p === key) p = null
      parentNode.set(key, p)
    }
    this.cutLoops(parentNode, onMissing)
    for (const [key, node] of this.nodes) {
      const p = parentNode.get(key) ?? null
      let parent = p === null ? null : this.nodes.get(p)!.entries.at(-1)!.id
      for (const e of node.entries) {
        e.parent_id = parent
        parent = e.id
        out.push(e)
      }
    }
    return out
  }

  /** The first key along an alias chain that is not known (or the key where it loops). */
  private unknownIn(key: string): string {
    const seen = new Set<string>()
    let k: string | null = key
    while (k !== null && this.aliases.has(k) && !seen.has(k)) {
      seen.add(k)
      k = this.aliases.get(k) ?? null
    }
    return k ?? key
  }

  private cutLoops(parentNode: Map<string, string | null>, onMissing?: (m: MissingParent) => void): void {
    const state = new Map<string, 1 | 2>()
    for (const start of parentNode.keys()) {
      const walked: string[] = []
      let k: string | null = start
      while (k !== null && state.get(k) !== 2) {
        if (state.get(k) === 1) {
          // `k` is on a loop: make it a root so every chain reaches one.
          onMissing?.({ key: k, parent: parentNode.get(k)!, missing: k })
          parentNode.set(k, null)
          break
        }
        state.set(k, 1)
        walked.push(k)
        k = parentNode.get(k) ?? null
      }
      for (const w of walked) state.set(w, 2)
    }
  }
}

/** Child ids by parent id (`null` for roots), in entry order. */
export function childrenOf(entries: readonly SessionEntry[]): Map<string | null, string[]> {
  const children = new Map<string | null, string[]>()
  for (const e of entries) {
    const list = children.get(e.parent_id)
    if (list) list.push(e.id)
    else children.set(e.parent_id, [e.id])
  }
  return children
}

/**
 * The leaf a user was most likely on: the newest leaf that is a message (side leaves of
 * bookkeeping entries never win), ties to the later one in file order.
 */
export function latestLeaf(entries: readonly SessionEntry[]): string | null {
  const parents = new Set<string | null>()
  for (const e of entries) parents.add(e.parent_id)
  let best: SessionEntry | undefined
  let bestCustom: SessionEntry | undefined
  for (const e of entries) {
    if (parents.has(e.id)) continue
    if (e.kind === 'message') {
      if (!best || e.timestamp >= best.timestamp) best = e
    } else if (!bestCustom || e.timestamp >= bestCustom.timestamp) bestCustom = e
  }
  return (best ?? bestCustom)?.id ?? null
}

/** Root → `leaf` along parents. */
export function pathTo(byId: ReadonlyMap<string, SessionEntry>, leaf: string | null): SessionEntry[] {
  const out: SessionEntry[] = []
  const seen = new Set<string>()
  for (let id = leaf; id !== null && !seen.has(id);) {
    seen.add(id)
    const e = byId.get(id)
    if (!e) break
    out.push(e)
    id = e.parent_id
  }
  return out.reverse()
}
