import type { Commit, SessionChange, Store } from '@colloquy/core'

/**
 * Core's live queries each watch the whole commit stream, so a thousand rows each holding an
 * `entry$` pay a thousand callbacks for every streamed token (about 0.1 ms per token: more
 * than rendering the row). The hub holds one `commits$` subscription per store and wakes only
 * the watchers a commit concerns, found by session and entry id. What a woken watcher then
 * shows is still read from core's live query. It can go once core dispatches by entry itself.
 */
interface SessionWatchers {
  /** By entry id: woken when that entry is added or updated. */
  readonly entries: Map<string, Set<() => void>>
  /** Woken when entries are added: the tree's shape changed. */
  readonly shape: Set<() => void>
  /** Woken when the shape changed or the active leaf moved: the transcript's sequence changed. */
  readonly path: Set<() => void>
  /** The active leaf last seen; every content update also bumps the head, the leaf tells apart. */
  leaf?: string | null
}

interface Hub {
  readonly sessions: Map<string, SessionWatchers>
  upstream?: { unsubscribe(): void }
  watchers: number
}

const hubs = new WeakMap<Store, Hub>()

function wakeFor(w: SessionWatchers, change: SessionChange): Set<() => void> {
  const woken = new Set<() => void>()
  // Reloaded from storage or deleted: anything may differ now.
  const everything = change.reloaded || change.head === null
  const reshaped = everything || change.added.length > 0
  const moved = change.head != null && change.head.leaf !== w.leaf
  if (change.head != null) w.leaf = change.head.leaf
  if (reshaped) for (const f of w.shape) woken.add(f)
  if (reshaped || moved) for (const f of w.path) woken.add(f)
  if (everything) for (const set of w.entries.values()) for (const f of set) woken.add(f)
  else for (const e of [...change.added, ...change.updated]) for (const f of w.entries.get(e.id) ?? []) woken.add(f)
  return woken
}

function onCommit(hub: Hub, commit: Commit): void {
  for (const [session_id, change] of commit.changes) {
    const w = hub.sessions.get(session_id)
    if (w) for (const wake of wakeFor(w, change)) wake()
  }
}

function join(store: Store, session_id: string, add: (w: SessionWatchers) => () => void): () => void {
  let hub = hubs.get(store)
  if (!hub) hubs.set(store, (hub = { sessions: new Map(), watchers: 0 }))
  const h = hub
  let w = h.sessions.get(session_id)
  if (!w) h.sessions.set(session_id, (w = { entries: new Map(), shape: new Set(), path: new Set() }))
  const sw = w
  const remove = add(sw)
  if (h.watchers++ === 0) h.upstream = store.commits$.subscribe((c) => onCommit(h, c))
  let joined = true
  return () => {
    if (!joined) return
    joined = false
    remove()
    if (sw.entries.size === 0 && sw.shape.size === 0 && sw.path.size === 0) h.sessions.delete(session_id)
    if (--h.watchers === 0) h.upstream?.unsubscribe()
  }
}

/** Calls `wake` after each commit that added or updated the entry, or reloaded or deleted its session. */
export function watchEntry(store: Store, session_id: string, entry_id: string, wake: () => void): () => void {
  return join(store, session_id, (w) => {
    let set = w.entries.get(entry_id)
    if (!set) w.entries.set(entry_id, (set = new Set()))
    const s = set
    s.add(wake)
    return () => {
      s.delete(wake)
      if (s.size === 0) w.entries.delete(entry_id)
    }
  })
}

/** Calls `wake` after each commit that added entries to the session, or reloaded or deleted it. */
export function watchShape(store: Store, session_id: string, wake: () => void): () => void {
  return join(store, session_id, (w) => {
    w.shape.add(wake)
    return () => void w.shape.delete(wake)
  })
}

/** Like `watchShape`, and also after each move of the session's active leaf. */
export function watchPath(store: Store, session_id: string, wake: () => void): () => void {
  return join(store, session_id, (w) => {
    w.path.add(wake)
    return () => void w.path.delete(wake)
  })
}
