import type { SessionEntry } from '../model/model.js'
import type { SessionHead } from '../storage/seam.js'
import { isHeldSealed } from '../model/sealed-entry.js'

/** One session as this store holds it in memory. Entries are loaded on first access and kept. */
export interface SessionState {
  head: SessionHead
  entries?: Map<string, SessionEntry>
  /** Child ids by parent id (`null` for roots), in append order: what branch pickers need. */
  children?: Map<string | null, string[]>
  /**
   * Ids of entries held sealed, not opened yet (an encrypted store loads a session so and opens
   * what its reads return: see `model/sealed-entry.ts`); absent or empty once every one is.
   */
  sealed?: Set<string>
}

/** Whether the session holds every entry, each opened: what readers of the whole session need. */
export const opened = (s: SessionState | undefined): boolean => !!s?.entries && !s.sealed?.size

/** The committed state: equal to what is on disk, by construction (only commits change it). */
export class State {
  /** In order of last use (`use`), least recent first. */
  readonly sessions = new Map<string, SessionState>()
  /**
   * Set over a storage with paged reads: `sessions` is then a working set, and a session not
   * in it may still be on disk (its head is read on first use); otherwise it holds every one.
   */
  partial = false

  /** Marks a session as just used: the working set lets go of the least recently used first. */
  use(id: string): void {
    // Only a working set has an order to keep (and iterations of the whole map, a host's, stay put).
    if (!this.partial) return
    const s = this.sessions.get(id)
    if (!s) return
    this.sessions.delete(id)
    this.sessions.set(id, s)
  }

  /**
   * Lets go of the least recently used sessions past `max` (head and entries: both are read
   * again on next use), except those `keep` names (watched or busy). Returns those let go.
   */
  trimHeads(max: number, keep: (id: string) => boolean): string[] {
    const gone: string[] = []
    if (!this.partial) return gone
    let over = this.sessions.size - max
    for (const id of this.sessions.keys()) {
      if (over <= 0) break
      if (keep(id)) continue
      gone.push(id)
      over--
    }
    for (const id of gone) this.sessions.delete(id)
    return gone
  }

  load(heads: Iterable<SessionHead>): void {
    for (const head of heads) this.sessions.set(head.meta.session_id, { head })
  }

  /**
   * Replaces a session with what storage holds (first access, or a copy found stale). `s`, when
   * given, is a session another `State` made of the first of these entries while the rest was
   * read: it is taken over and completed.
   */
  setSession(
    head: SessionHead,
    entries: readonly SessionEntry[],
    s: SessionState = { head, entries: new Map(), children: new Map() },
  ): SessionState {
    s.head = head
    for (const e of entries.slice(s.entries!.size)) {
      s.entries!.set(e.id, e)
      if (isHeldSealed(e)) (s.sealed ??= new Set()).add(e.id)
      addChild(s, e)
    }
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
    else if (!isHeldSealed(entry)) s.sealed?.delete(entry.id)
    return prev !== entry
  }
}

/**
 * Siblings are kept in creation order (entry timestamp, then id), whatever order they arrived
 * in, so a branch picker's "2 / 3" means the same on every tab and device.
 */
function addChild(s: SessionState, e: SessionEntry): void {
  const list = s.children!.get(e.parent_id)
  if (!list) return void s.children!.set(e.parent_id, [e.id])
  const before = (id: string): boolean => {
    const o = s.entries!.get(id)!
    return o.timestamp < e.timestamp || (o.timestamp === e.timestamp && o.id < e.id)
  }
  let i = list.length
  while (i > 0 && !before(list[i - 1])) i--
  list.splice(i, 0, e.id)
}
