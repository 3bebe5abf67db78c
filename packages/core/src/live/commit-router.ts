import type { Subscription } from 'rxjs'
import type { Commit, SessionChange } from '../engine/changes.js'
import type { Engine } from '../engine/engine.js'

type Listener = (change: SessionChange) => void

interface SessionListeners {
  /** Every change of the session (transcripts, trees, metas). */
  readonly all: Set<Listener>
  /** By entry id: only changes that add or rewrite that entry, or replace the whole session. */
  readonly entries: Map<string, Set<Listener>>
}

/**
 * One subscription to the commit stream for all live queries of a store, routing each commit
 * to the queries of the sessions (and entries) it touched. A thousand message rows each
 * watching their entry cost nothing when another entry streams.
 */
export class CommitRouter {
  private readonly sessions = new Map<string, SessionListeners>()
  private readonly global = new Set<(commit: Commit) => void>()
  private upstream: Subscription | undefined
  private count = 0

  constructor(private readonly engine: Engine) {}

  /** Listens to one session, or to one entry of it when `entry_id` is given. */
  session(session_id: string, listener: Listener, entry_id?: string): () => void {
    let s = this.sessions.get(session_id)
    if (!s) this.sessions.set(session_id, (s = { all: new Set(), entries: new Map() }))
    const target =
      entry_id === undefined
        ? s.all
        : (s.entries.get(entry_id) ?? s.entries.set(entry_id, new Set()).get(entry_id)!)
    target.add(listener)
    return this.hold(() => {
      target.delete(listener)
      if (entry_id !== undefined && target.size === 0) s!.entries.delete(entry_id)
      if (s!.all.size === 0 && s!.entries.size === 0) this.sessions.delete(session_id)
    })
  }

  /** Whether a live query watches the session (the working set of heads keeps it). */
  watching(session_id: string): boolean {
    return this.sessions.has(session_id)
  }

  /** Listens to every commit (queries over all sessions). */
  any(listener: (commit: Commit) => void): () => void {
    this.global.add(listener)
    return this.hold(() => this.global.delete(listener))
  }

  private hold(release: () => void): () => void {
    if (this.count++ === 0) this.upstream = this.engine.commits.subscribe((c) => this.route(c))
    let held = true
    return () => {
      if (!held) return
      held = false
      release()
      if (--this.count === 0) {
        this.upstream?.unsubscribe()
        this.upstream = undefined
      }
    }
  }

  private route(commit: Commit): void {
    for (const listener of [...this.global]) listener(commit)
    for (const [id, change] of commit.changes) {
      const s = this.sessions.get(id)
      if (!s) continue
      for (const listener of [...s.all]) listener(change)
      if (!s.entries.size) continue
      if (change.reloaded || change.head === null) {
        for (const set of [...s.entries.values()]) for (const listener of [...set]) listener(change)
        continue
      }
      for (const e of change.added) for (const listener of [...(s.entries.get(e.id) ?? [])]) listener(change)
      for (const e of change.updated)
        for (const listener of [...(s.entries.get(e.id) ?? [])]) listener(change)
    }
  }
}
