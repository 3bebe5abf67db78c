import { Observable, type Subscriber } from 'rxjs'
import type { SessionChange } from '../engine/changes.js'
import { CommitRouter } from './commit-router.js'
import type { Engine } from '../engine/engine.js'
import { itemOf, passes } from '../model/items.js'
import type {
  AttachmentMeta,
  ListRequest,
  MessageItem,
  Role,
  SessionEntry,
  SessionMeta,
} from '../model/model.js'
import { passesFilters, selectSessions } from '../ops/select.js'
import { compareFor, positionOf } from '../model/order.js'
import { metadataMatches } from '../model/json.js'
import type { PageQuery } from '../storage/seam.js'
import { pathTo } from '../model/path.js'
import { opened, type SessionState } from '../engine/state.js'
import { isHeldSealed, isUnopened } from '../model/sealed-entry.js'
import { isValidId } from '../validation/limits.js'
import { invalid } from '../model/errors.js'

/**
 * What a live query needs of its session's entries: none (its head), every one opened, or held
 * (loaded; an encrypted store's left sealed, the query opens what it shows).
 */
type Entries = 'none' | 'opened' | 'held'

/** How many openings in a row `messages$` makes for one value before it opens the session whole. */
const OPEN_TURNS = 5

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
export function branchOf(
  tree: SessionTree,
  entry_id: string,
): { index: number; count: number; siblings: readonly string[] } {
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
      if (
        (tree.entries.get(child)?.timestamp ?? -Infinity) >=
        (tree.entries.get(newest)?.timestamp ?? -Infinity)
      )
        newest = child
    }
    id = newest
  }
}

/** What `draft$` emits: the stored text (`null` when none) and the parked chips. */
export interface DraftState {
  readonly draft: string | null
  readonly attachments: readonly AttachmentMeta[]
}

const NO_ATTACHMENTS: readonly AttachmentMeta[] = Object.freeze([])

/**
 * Errors `subscriber` with the validator's `session/invalid_request` if an id it was given is not
 * one the validator accepts (too long, not a string, not well-formed Unicode): such an id names
 * nothing, and is never looked up. `undefined` is an id not given.
 */
function refused(subscriber: Subscriber<unknown>, ...ids: unknown[]): boolean {
  const bad = ids.find((id) => id !== undefined && !isValidId(id))
  if (bad === undefined) return false
  subscriber.error(
    invalid(`id: not an id (${typeof bad === 'string' ? `${bad.length} characters` : typeof bad})`),
  )
  return true
}

const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i])

/**
 * Live queries over the engine's commit stream. Each emits its current value on subscribe (at
 * once when the data is in memory) and again only when a commit changed it; values that did not
 * change keep their identity, so UI bindings re-render exactly what changed.
 */
export class LiveQueries {
  private readonly router: CommitRouter

  constructor(private readonly engine: Engine) {
    this.router = new CommitRouter(engine)
    engine.keep = (id) => this.router.watching(id)
  }

  /**
   * Runs `onChange` for commits touching `session_id` (only those touching `entry_id`, when
   * given), after loading the session's entries if needed.
   */
  private watchSession<T>(
    subscriber: Subscriber<T>,
    session_id: string,
    entries: Entries,
    onChange: (s: SessionState | undefined, change: SessionChange | undefined, again: () => void) => void,
    entry_id?: string,
  ): () => void {
    if (refused(subscriber, session_id, entry_id)) return () => {}
    // Over a storage with paged reads, a session not held is read once before it is called gone.
    let read = false
    const run = (change?: SessionChange): void => {
      const s = this.engine.state.sessions.get(session_id)
      if (!s && this.engine.state.partial && !read) {
        read = true
        this.engine.ensureHead(session_id).then(
          () => run(),
          (e: unknown) => subscriber.error(e),
        )
        return
      }
      // 'opened': every entry opened, these queries read them all. 'held': loaded, an encrypted
      // store's entries left sealed for the query to open what it shows (`messages$`).
      if (entries === 'opened' && s && !opened(s))
        this.engine.ensureLoaded(session_id).catch((e) => subscriber.error(e))
      else if (entries === 'held' && s && !s.entries)
        this.engine.ensureHeld(session_id).catch((e) => subscriber.error(e))
      else onChange(s, change, run)
    }
    const stop = this.router.session(session_id, run, entry_id)
    run()
    return stop
  }

  session$(session_id: string): Observable<SessionMeta | null> {
    return new Observable((subscriber) => {
      let last: SessionMeta | null | undefined
      return this.watchSession(subscriber, session_id, 'none', (s) => {
        const meta = s?.head.meta ?? null
        if (meta !== last) subscriber.next((last = meta))
      })
    })
  }

  /** The session's attachment list (metadata), `null` once the session is gone. */
  attachments$(session_id: string): Observable<readonly AttachmentMeta[] | null> {
    return new Observable((subscriber) => {
      let last: readonly AttachmentMeta[] | null | undefined
      return this.watchSession(subscriber, session_id, 'none', (s) => {
        const list = s ? (s.head.attachments ?? NO_ATTACHMENTS) : null
        const same = last === list || (last != null && list !== null && sameItems(last, list))
        if (!same) subscriber.next((last = list))
      })
    })
  }

  /** The parked composer input; emitted again only when its text or chips changed. */
  draft$(session_id: string): Observable<DraftState | null> {
    return new Observable((subscriber) => {
      let last: DraftState | null | undefined
      return this.watchSession(subscriber, session_id, 'none', (s) => {
        const meta = s?.head.meta
        if (!meta) {
          if (last !== null) subscriber.next((last = null))
          return
        }
        const draft = meta.draft ?? null
        const attachments = meta.draft_attachments ?? NO_ATTACHMENTS
        if (
          last &&
          last.draft === draft &&
          sameItems(
            last.attachments.map((a) => a.attachment_id),
            attachments.map((a) => a.attachment_id),
          )
        )
          return
        subscriber.next((last = Object.freeze({ draft, attachments })))
      })
    })
  }

  sessions$(req: Omit<ListRequest, 'cursor'> = {}): Observable<SessionMeta[]> {
    if (this.engine.state.partial) return this.pagedSessions$(req)
    return new Observable((subscriber) => {
      let last: SessionMeta[] | undefined
      const emit = (): void => {
        const metas = [...this.engine.state.sessions.values()].map((s) => s.head.meta)
        let list = selectSessions(metas, req)
        if (req.limit != null) list = list.slice(0, Math.max(req.limit, 1))
        if (!last || !sameItems(last, list)) subscriber.next((last = list))
      }
      const stop = this.router.any((c) => {
        for (const ch of c.changes.values()) if (ch.head !== undefined || ch.reloaded) return emit()
      })
      emit()
      return stop
    })
  }

  /**
   * `sessions$` over a storage with paged reads: the first page is read from the storage's
   * indexes, and each commit's changed heads (this tab's, another tab's, sync's: a commit carries
   * the head of every session it changed, loaded here or not) are laid over it in memory. Only
   * when that cannot tell the page (a full page lost a session, or one moved past its end) is
   * the page read again.
   */
  private pagedSessions$(req: Omit<ListRequest, 'cursor'>): Observable<SessionMeta[]> {
    const paged = this.engine.storage.paged!
    const order = req.order ?? 'updated_desc'
    const cmp = compareFor(order)
    const before = (a: SessionMeta, b: SessionMeta): number => cmp(positionOf(a, order), positionOf(b, order))
    const limit = req.limit != null ? Math.max(req.limit, 1) : Infinity
    const query: PageQuery = {
      order,
      status: req.status,
      kinds: req.kinds,
      ...(req.metadata && { accept: (m: SessionMeta) => metadataMatches(req.metadata, m.metadata) }),
      limit,
    }
    return new Observable((subscriber) => {
      let last: SessionMeta[] | undefined
      let reading = false
      let again = false
      const show = (list: SessionMeta[]): void => {
        if (!last || !sameItems(last, list)) subscriber.next((last = list))
      }
      const read = (): void => {
        if (reading) return void (again = true)
        reading = true
        this.engine
          .readPage(() => paged.page(query))
          .then(
            (heads) => {
              reading = false
              if (again) {
                again = false
                return read()
              }
              if (!subscriber.closed) show(heads.map((h) => h.meta))
            },
            (e: unknown) => subscriber.error(e),
          )
      }
      const stop = this.router.any((c) => {
        let changed: Map<string, SessionMeta | null> | undefined
        for (const ch of c.changes.values())
          if (ch.head !== undefined) (changed ??= new Map()).set(ch.session_id, ch.head && ch.head.meta)
        if (!changed) return
        if (reading || !last) return void (again = reading)
        // The page held: every session on disk not in it sorts after its last one (when full).
        const end = last.length >= limit ? last[last.length - 1] : undefined
        const merged = last.filter((m) => !changed.has(m.session_id))
        for (const m of changed.values()) if (m && passesFilters(m, req)) merged.push(m)
        merged.sort(before)
        const known = end ? merged.filter((m) => before(m, end) <= 0) : merged
        if (end && known.length < limit) return read()
        show(known.length > limit ? known.slice(0, limit) : known)
      })
      read()
      return stop
    })
  }

  entry$(session_id: string, entry_id: string): Observable<SessionEntry | null> {
    return new Observable((subscriber) => {
      let last: SessionEntry | null | undefined
      // An encrypted store holds the session's entries sealed: this one is opened alone (a
      // tampered one errors there), then read again. Changes meanwhile wait for that opening.
      let opening = false
      return this.watchSession(
        subscriber,
        session_id,
        'held',
        (s, _change, again) => {
          if (opening) return
          const entry = s?.entries?.get(entry_id) ?? null
          if (entry && isHeldSealed(entry)) {
            opening = true
            this.engine.openEntries(session_id, [entry]).then(
              () => {
                opening = false
                if (!subscriber.closed) again()
              },
              (e: unknown) => subscriber.error(e),
            )
            return
          }
          if (entry !== last) subscriber.next((last = entry))
        },
        entry_id,
      )
    })
  }

  /** Every entry with its content: an encrypted store opens the session whole for it. */
  tree$(session_id: string): Observable<SessionTree | null> {
    return new Observable((subscriber) => {
      let last: SessionTree | null | undefined
      return this.watchSession(subscriber, session_id, 'opened', (s, change) => {
        if (!s?.entries) {
          if (last !== null) subscriber.next((last = null))
          return
        }
        const structural = !change || change.reloaded || change.added.length > 0 || change.updated.length > 0
        if (last && !structural && last.active_leaf === s.head.leaf) return
        const children = new Map<string | null, readonly string[]>()
        for (const [k, v] of s.children!) children.set(k, Object.freeze([...v]))
        subscriber.next(
          (last = Object.freeze({ active_leaf: s.head.leaf, entries: new Map(s.entries), children })),
        )
      })
    })
  }

  /**
   * An entry's place among its siblings, for a "2 / 3" picker: emits again only when a sibling
   * is added (streaming into any message never wakes it). `null` while the entry is unknown.
   * Ids and parents only: an encrypted store opens no entry for it.
   */
  branch$(session_id: string, entry_id: string): Observable<BranchPosition | null> {
    return new Observable((subscriber) => {
      if (refused(subscriber, entry_id)) return
      let last: BranchPosition | null | undefined
      return this.watchSession(subscriber, session_id, 'held', (s, change) => {
        if (
          last !== undefined &&
          change &&
          !change.reloaded &&
          change.head !== null &&
          change.added.length === 0
        )
          return
        const entry = s?.entries?.get(entry_id)
        const siblings = entry ? (s!.children!.get(entry.parent_id) ?? [entry_id]) : undefined
        const next = siblings
          ? {
              index: siblings.indexOf(entry_id),
              count: siblings.length,
              siblings: Object.freeze([...siblings]),
            }
          : null
        if (next === null ? last !== null : !last || !sameItems(last.siblings, next.siblings))
          subscriber.next((last = next))
      })
    })
  }

  messages$(req: LiveMessagesRequest): Observable<MessageItem[]> {
    const includeCustom = req.include_custom === true
    return new Observable((subscriber) => {
      if (refused(subscriber, req.from_entry_id ?? undefined)) return
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
        for (const e of path)
          position.set(e.id, passes(e, req.roles, includeCustom) ? out.push(itemOf(e)) - 1 : -1)
        return out
      }

      /** The leaf moved down from the old one (an append on the active branch): extend in place. */
      const extend = (
        s: SessionState,
        change: SessionChange,
        next: MessageItem[],
      ): MessageItem[] | undefined => {
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

      // An encrypted store holds the session's entries sealed: what the list shows is opened
      // first (the entries on the path that pass the filter, in one batch), then the list is
      // built again. Changes meanwhile wait for that opening: the list built after it reads them.
      let opening = false
      let turns = 0
      let again = (): void => {}
      const open = (s: SessionState): void => {
        const target = req.from_entry_id ?? s.head.leaf
        const entries = s.entries
        const path = target !== null && entries?.has(target) ? pathTo((id) => entries.get(id), target) : []
        const shown = path.filter((e) => isHeldSealed(e) && passes(e, req.roles, includeCustom))
        opening = true
        // A session that keeps changing under its openings is opened whole, as other queries do.
        const done =
          ++turns > OPEN_TURNS
            ? this.engine.ensureLoaded(req.session_id)
            : this.engine.openEntries(req.session_id, shown)
        done.then(
          () => {
            opening = false
            if (!subscriber.closed) again()
          },
          (e: unknown) => subscriber.error(e),
        )
      }

      const onChange = (s: SessionState | undefined, change: SessionChange | undefined): void => {
        if (opening) return
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
          // The list met an entry held sealed: open what it shows (a tampered one errors there).
          if (isUnopened(e) && s) return open(s)
          subscriber.error(e)
          return
        }
        turns = 0
        if (!items || !sameItems(items, next)) subscriber.next((items = next))
      }
      if (!req.optimistic)
        return this.watchSession(subscriber, req.session_id, 'held', (s, change, run) => {
          again = run
          onChange(s, change)
        })
      // Optimistic: every value is read over the writes in flight, and each write is shown when
      // it is handed to the storage; a failed one is taken back by reading again.
      const id = req.session_id
      const view = (s: SessionState | undefined): SessionState | undefined => this.engine.pendingView(s, id)
      const stop = this.watchSession(subscriber, id, 'held', (s, change, run) => {
        again = run
        onChange(view(s), change)
      })
      const sub = this.engine.pending.subscribe(({ sessions, failed }) => {
        if (!sessions.has(id) || !items) return
        const s = view(this.engine.state.sessions.get(id))
        if (failed || !s?.entries) return onChange(s, undefined)
        const own = [...(this.engine.pendingOverlay()?.entries.get(id)?.values() ?? [])]
        onChange(s, {
          session_id: id,
          head: s.head,
          added: own.filter((e) => !position.has(e.id)),
          updated: own.filter((e) => position.has(e.id)),
          reloaded: false,
        })
      })
      return () => {
        sub.unsubscribe()
        stop()
      }
    })
  }
}
