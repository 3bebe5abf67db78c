import type { SessionEntry } from './model.js'
import type { SessionHead } from './storage.js'

/** One session as this store holds it in memory. Entries are loaded on first access and kept. */
export interface SessionState {
  head: SessionHead
  entries?: Map<string, SessionEntry>
  /** Child ids by parent id (`null` for roots), in append order: what branch pickers need. */
  children?: Map<string | null, string[]>
}

/** The committed state: equal to what is on disk, by construction (only commits change it). */
export class State {
  readonly sessions = new Map<string, SessionState>()

  load(heads: Iterable<SessionHead>): void {
    for (const head of heads) this.sessions.set(head.meta.session_id, { head })
  }

  isLoaded(session_id: string): boolean {
    return this.sessions.get(session_id)?.entries !== undefined
  }

  /** Replaces a session with what storage holds (first access, or a copy found stale). */
  setSession(head: SessionHead, entries: SessionEntry[]): SessionState {
    const s: SessionState = { head, entries: new Map(), children: new Map() }
    for (const e of entries) s.entries!.set(e.id, e)
    // Children follow append order: entry timestamps, ties broken by id, give a stable order.
    const sorted = [...s.entries!.values()].sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    for (const e of sorted) addChild(s, e)
    this.sessions.set(head.meta.session_id, s)
    return s
  }

  /** Adds or replaces one entry; returns false when `entry` is older than what is held. */
  putEntry(s: SessionState, entry: SessionEntry): boolean {
    if (!s.entries) return false
    const prev = s.entries.get(entry.id)
    if (prev && prev.revision > entry.revision) return false
    s.entries.set(entry.id, entry)
    if (!prev) addChild(s, entry)
    return prev !== entry
  }
}

function addChild(s: SessionState, e: SessionEntry): void {
  const list = s.children!.get(e.parent_id)
  if (list) list.push(e.id)
  else s.children!.set(e.parent_id, [e.id])
}
