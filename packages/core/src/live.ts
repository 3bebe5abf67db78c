import { Observable, type Subscriber } from 'rxjs'
import type { SessionChange } from './changes.js'
import { CommitRouter } from './commit-router.js'
import type { Draft } from './draft.js'
import type { Engine } from './engine.js'
import { itemOf, passes } from './items.js'
import type { AttachmentMeta, MessageItem, Role, SessionEntry } from './model.js'
import { pathTo } from './path.js'
import type { SessionState } from './state.js'

/** What `messages$` takes: the read of `session::messages` without paging. */
export interface LiveMessagesRequest {
  session_id: string
  roles?: Role[] | null
  include_custom?: boolean | null
  from_entry_id?: string | null
  /**
   * Emit a local write as soon as it is handed to the storage, before it commits (what Dexie's
   * live queries do), and emit again without it if the commit fails. Off by default: then every
   * value emitted is on disk (events always wait for the commit).
   */
  optimistic?: boolean
}

/** A session's whole tree: what a branch picker or a tree view renders. */
export interface SessionTree {
  readonly active_leaf: string | null
  readonly entries: ReadonlyMap<string, SessionEntry>
  /** Child ids by parent id (`null` for roots), oldest first. */
  readonly children: ReadonlyMap<string | null, readonly string[]>
}

/** Where an entry sits among its siblings: "2 / 3" is `{ index: 1, count: 3 }`. */
export function branchOf(tree: SessionTree, entry_id: string): { index: number; count: number; siblings: readonly string[] } {
  const entry = tree.entries.get(entry_id)
  if (!entry) return { index: -1, count: 0, siblings: [] }
  const siblings = tree.children.get(entry.parent_id) ?? [entry_id]
  return { index: siblings.indexOf(entry_id), count: siblings.length, siblings }
}

/** Where an entry sits among its siblings, as `branch$` emits it. */
export interface BranchPosition {
  readonly index: number
  readonly count: number
  readonly siblings: readonly string[]
}

/**
 * Where switching to a sibling lands: from that entry down, always into the newest child
 * (highest timestamp; on a tie the later one in children order) until a leaf, so the reader sees
 * the latest conversation that continued from the branch they picked.
 */
export function newestLeafUnder(tree: Pick<SessionTree, 'entries' | 'children'>, entry_id: string): string {
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

/** What `draft$` emits: the stored text (`null` when none) and the parked chips. */
export interface DraftState {
  readonly draft: string | null
  readonly attachments: readonly AttachmentMeta[]
}

/**
 * A session as it will be once the writes in flight commit: the head and entries read through
 * `draft` (entries must be loaded). Children are not overlaid: only `messages$` reads this.
 */
function pendingView(draft: Draft | undefined, s: SessionState | undefined, session_id: string): SessionState | undefined {
  if (!draft || !s?.entries) return s
  if (!draft.heads.has(session_id) && !draft.entries.has(session_id) && !draft.base) return s
  const head = draft.head(session_id)
  if (!head) return undefined
  const entry = (entry_id: string): SessionEntry | undefined => draft.entry(session_id, entry_id)
  return { head, entries: { get: entry, has: (entry_id: string) => entry(entry_id) !== undefined } as Map<string, SessionEntry>, children: s.children }
}

export const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/**
 * Live queries over the engine's commit stream. Each emits its current value on subscribe (at
 * once when the data is in memory) and again only when a commit changed it; values that did not
 * change keep their identity, so UI bindings re-render exactly what changed. `messages$` is
 * here; the others are in `live-queries.ts`, fetched on first use.
 */
export class LiveQueries {
  readonly router: CommitRouter

  constructor(readonly engine: Engine) {
    this.router = new CommitRouter(engine)
  }

  /**
   * Runs `onChange` for commits touching `session_id` (only those touching `entry_id`, when
   * given), after loading the session's entries if needed.
   */
  watchSession<T>(
    subscriber: Subscriber<T>,
    session_id: string,
    needEntries: boolean,
    onChange: (s: SessionState | undefined, change: SessionChange | undefined) => void,
    entry_id?: string,
  ): () => void {
    const stop = this.router.session(
      session_id,
      (change) => {
        const s = this.engine.state.sessions.get(session_id)
        if (needEntries && s && !s.entries) return void this.load(subscriber, session_id)
        onChange(s, change)
      },
      entry_id,
    )
    const s = this.engine.state.sessions.get(session_id)
    if (needEntries && s && !s.entries) this.load(subscriber, session_id)
    else onChange(s, undefined)
    return stop
  }

  private load(subscriber: Subscriber<unknown>, session_id: string): void {
    this.engine.ensureLoaded(session_id).catch((e) => subscriber.error(e))
  }

  messages$(req: LiveMessagesRequest): Observable<MessageItem[]> {
    const includeCustom = req.include_custom === true
    return new Observable((subscriber) => {
      let leaf: string | null = null
      let items: MessageItem[] | undefined
      // Position of each path entry in `items` (−1 when filtered out), for in-place updates.
      let position = new Map<string, number>()

      const rebuild = (s: SessionState | undefined): MessageItem[] => {
        leaf = s?.entries ? (req.from_entry_id ?? s.head.leaf) : null
        const entries = s?.entries
        const path = leaf !== null && entries?.has(leaf) ? pathTo((id) => entries.get(id), leaf) : []
        position = new Map()
        const out: MessageItem[] = []
        for (const e of path) position.set(e.id, passes(e, req.roles, includeCustom) ? out.push(itemOf(e)) - 1 : -1)
        return out
      }

      /** The leaf moved down from the old one (an append on the active branch): extend in place. */
      const extend = (s: SessionState, change: SessionChange, next: MessageItem[]): MessageItem[] | undefined => {
        const newLeaf = s.head.leaf
        if (req.from_entry_id != null || newLeaf === null) return undefined
        const added: SessionEntry[] = []
        let id: string | null = newLeaf
        while (id !== leaf) {
          const e: SessionEntry | undefined = id === null ? undefined : s.entries!.get(id)
          if (!e || added.length > change.added.length) return undefined
          added.push(e)
          id = e.parent_id
        }
        const out = next === items ? [...next] : next
        for (const e of added.reverse()) {
          position.set(e.id, passes(e, req.roles, includeCustom) ? out.push(itemOf(e)) - 1 : -1)
        }
        leaf = newLeaf
        return out
      }

      const onChange = (s: SessionState | undefined, change: SessionChange | undefined): void => {
        let next: MessageItem[]
        try {
          if (!items || !change || change.reloaded || !s?.entries || change.head === null) next = rebuild(s)
          else {
            next = items
            for (const e of change.updated) {
              const i = position.get(e.id)
              if (i === undefined || i < 0) continue
              if (next === items) next = [...items]
              // What the session holds now (an optimistic view may hold a newer revision).
              next[i] = itemOf(s.entries.get(e.id) ?? e)
            }
            const target = req.from_entry_id ?? s.head.leaf
            if (target !== leaf) next = extend(s, change, next) ?? rebuild(s)
          }
        } catch (e) {
          subscriber.error(e)
          return
        }
        if (!items || !sameItems(items, next)) subscriber.next((items = next))
      }
      if (!req.optimistic) return this.watchSession(subscriber, req.session_id, true, onChange)
      // Optimistic: every value is read over the writes in flight, and each write is shown when
      // it is handed to the storage; a failed one is taken back by reading again.
      const id = req.session_id
      const view = (s: SessionState | undefined): SessionState | undefined => pendingView(this.engine.pendingDraft(), s, id)
      const stop = this.watchSession(subscriber, id, true, (s, change) => onChange(view(s), change))
      const sub = this.engine.pending.subscribe(({ sessions, failed }) => {
        if (!sessions.has(id) || !items) return
        const s = view(this.engine.state.sessions.get(id))
        if (failed || !s?.entries) return onChange(s, undefined)
        const own = [...(this.engine.pendingDraft()?.entries.get(id)?.values() ?? [])]
        onChange(s, { session_id: id, head: s.head, added: own.filter((e) => !position.has(e.id)), updated: own.filter((e) => position.has(e.id)), reloaded: false })
      })
      return () => {
        sub.unsubscribe()
        stop()
      }
    })
  }
}
