import type { SessionEntry, SessionImport } from '@colloquy/core'
import { topological } from '../session/inspect.js'

/** A session's entries that a target format can hold, each with its nearest kept ancestor. */
export interface KeptTree {
  /** Parents first. */
  entries: { entry: SessionEntry; parent: string | null }[]
  /** The active leaf, or its nearest kept ancestor. */
  leaf: string | null
  children: Map<string | null, string[]>
}

/**
 * The tree a chat-app export can carry: entries `keep` refuses are left out and their children
 * hang where they hung, so what the target holds keeps its shape (no fork made or lost).
 */
export function keptTree(session: SessionImport, keep: (e: SessionEntry) => boolean): KeptTree {
  const byId = new Map(session.entries.map((e) => [e.id, e]))
  const nearest = new Map<string, string | null>()
  const up = (id: string | null): string | null => {
    // Walks up through left-out entries (iteratively: sessions can be deep).
    const walked: string[] = []
    let k = id
    while (k !== null && !nearest.has(k)) {
      const e = byId.get(k)
      if (!e) {
        k = null
        break
      }
      if (keep(e)) {
        nearest.set(k, k)
        break
      }
      walked.push(k)
      k = e.parent_id
    }
    const found = k === null ? null : nearest.get(k)!
    for (const w of walked) nearest.set(w, found)
    return found
  }
  const entries: KeptTree['entries'] = []
  const children = new Map<string | null, string[]>()
  for (const e of topological(session.entries)) {
    if (!keep(e)) continue
    const parent = up(e.parent_id)
    entries.push({ entry: e, parent })
    const list = children.get(parent)
    if (list) list.push(e.id)
    else children.set(parent, [e.id])
  }
  return { entries, leaf: up(session.active_leaf), children }
}
