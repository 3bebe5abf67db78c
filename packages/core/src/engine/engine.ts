import { Subject } from 'rxjs'
import type { EntryCache } from './cache.js'
import { fold, type ChangePayload, type Commit, type ChangeSource, type SessionChange } from './changes.js'
import type { OpContext } from '../model/context.js'
import type { Overlay } from './overlay.js'
import type { EventEnvelope, FunctionId, FunctionMap, SessionEntry, SessionMeta } from '../model/model.js'
import { State, opened, type SessionState } from './state.js'
import { SessionError } from '../model/errors.js'
import type { SessionHead, SideWrite, Storage } from '../storage/seam.js'

export interface Pending {
  fn: FunctionId | 'internal'
  /** Who the write is for: local operations are recorded for sync, remote ones are not. */
  source: ChangeSource
  /** Sessions the step touches (read fresh from disk inside the transaction). */
  sessions?: readonly string[]
  /**
   * Internal writes (bulk import, replication) bring their own step. A step may return a
   * promise (a large replication letting the event loop turn between its slices): the batch
   * awaits it inside its transaction, and nothing of the overlay is seen before the commit.
   */
  run?: (d: Overlay) => unknown
  /** An internal write whose `req` names an `entry_id` only rewrites that message (a recipe update): it gathers as updates do. */
  req: { session_id?: string; entry_id?: string }
  guard?: CallGuard
  /** The sessions a call reading a page of them sees, read before its batch (see `OperationSpec.page`). */
  listed?: readonly SessionMeta[]
  /** Why that read failed: the call fails with it. */
  failure?: unknown
  resolve(value: unknown): void
  reject(error: unknown): void
}

/** An operation as it was applied inside a commit, for commit hooks (the sync outbox). */
export interface AppliedOp {
  readonly fn: FunctionId
  readonly request: unknown
  readonly response: unknown
}

/**
 * A check run in the commit just before an operation, on its session's head as read inside the
 * storage transaction (under the session's lock on a storage shared by several processes, so
 * nothing another process commits can slip between the check and the write). `{ answer }`
 * settles the call with that answer and nothing written for it; throwing fails the call.
 */
export type CallGuard = (head: SessionHead | undefined) => { answer: unknown } | void

/** Runs inside the commit's transaction; what it returns is written atomically with the commit. */
export type CommitHook = (
  applied: readonly AppliedOp[],
  overlay: Overlay,
  source: ChangeSource,
) => readonly SideWrite[]

/**
 * What runs batches (`BatchRunner` in `batches.ts`): fetched on the first call, so an app's first
 * screen does not wait for the code that writes. The store makes it (see `createStore`) and hands
 * the engine a function that fetches it.
 */
export interface Batches {
  /** Starts the next batch when it may go. */
  pump(): void
  /** Whether the call just queued waits behind a batch with all those queued before it (nothing to start now). */
  holds(): boolean
  /** The newest overlay handed to the storage and not yet folded in. */
  pendingOverlay(): Overlay | undefined
  /** A session as it will be once the writes in flight commit (see `Engine.pendingView`). */
  pendingView(s: SessionState | undefined, session_id: string): SessionState | undefined
}

/** Fetches the code that runs batches (with what writing needs: the storage's write half…) and makes it for `engine`. */
export type BatchCode = () => Promise<(engine: Engine) => Batches>

/** How many times `ensureLoaded` reads and opens a session whose entries change under it. */
const OPEN_TURNS = 5

/** How many heads a store over a storage with paged reads keeps when idle (about 2 KB each). */
export const DEFAULT_MAX_HEADS = 500

/**
 * The group-commit engine. Operations queue up; everything queued in one tick runs as one batch
 * in one storage transaction. A batch over sessions held in memory is built from memory and its
 * transaction checks their heads before committing, without waiting for the read (a head another
 * tab changed aborts it, and it runs again reading heads from disk): one round trip per awaited
 * append, and another tab's commit is still seen before deciding a parent. On a storage that
 * keeps transactions in order (IndexedDB) the next batch is built on the overlay of the one
 * committing and handed over at once; two in flight at most, so what arrives meanwhile gathers:
 * a burst of streamed updates still costs a few transactions.
 *
 * This file holds what showing a transcript needs (opening, loading entries, folding other tabs'
 * commits, the queue); running batches is in `batches.ts`, fetched on the first call (see
 * `Batches`), so an app's first screen does not wait for the code that writes.
 */
export class Engine {
  readonly state = new State()
  readonly commits = new Subject<Commit>()
  readonly hooks: CommitHook[] = []
  // What the batch runner (`batches.ts`) reads and writes of the engine: not for other callers.
  /** @internal Calls queued and not yet in a batch, in issue order. */
  readonly queue: Pending[] = []
  /** @internal Resolves when the queue is empty and nothing is in flight (`flush`). */
  running: Promise<void> | undefined
  /** @internal */
  idle: (() => void) | undefined
  private scheduled = false
  /** The batch runner, once its code is here (see `prepare`). */
  private batches: Batches | undefined
  private making: Promise<void> | undefined
  /** Batches that found a stale head inside their transaction and ran again (tests read it). */
  reruns = 0
  /**
   * Sessions whose writes were just handed to the storage, before they commit (`failed`: a batch
   * failed and its writes are gone), for live queries that opt in to optimistic values
   * (`pendingOverlay`). Events and the other live queries wait for the commit.
   */
  readonly pending = new Subject<{ readonly sessions: ReadonlySet<string>; readonly failed: boolean }>()
  private loading = new Map<string, Promise<void>>()
  /** Sessions being opened whole (`ensureLoaded`), by the state opened. */
  private opening = new Map<SessionState, Promise<void>>()
  /**
   * Set by the store: runs `run` in issue order with the store's calls (which reach the engine in
   * ticks, a microtask after they are issued). Writes submitted outside `store.call` (a recipe
   * update) go through it, so they keep their place among the calls issued before them.
   */
  inOrder?: <T>(run: () => Promise<T>) => Promise<T>
  /** Counts storage transactions (benchmarks report it). */
  transactions = 0
  /** With a byte budget, idle sessions' entries leave memory (see `EntryCache`). */
  readonly cache?: EntryCache
  /**
   * Over a storage with paged reads: how many heads the working set keeps at most once idle
   * (sessions holding entries, watched or busy ones aside; see `State.trimHeads`).
   */
  readonly maxHeads: number
  /** Set by the live queries: sessions the working set keeps (watched ones). */
  keep?: (session_id: string) => boolean
  /** Head reads in flight (`ensureHead`), and whether a commit touched the session meanwhile. */
  private heading = new Map<string, { p: Promise<SessionHead | undefined>; stale: boolean }>()
  /** Pages of heads being read (`readPage`): the sessions a commit touched meanwhile. */
  private pageReads = new Set<Set<string>>()

  constructor(
    readonly storage: Storage,
    readonly ctx: OpContext,
    /** Fetches and makes the batch runner (see `Batches`). */
    private readonly batchCode: BatchCode,
    /** `cache` makes the `EntryCache` (its code is fetched only by stores that ask for one). */
    options: { cache?: (state: State) => EntryCache; maxHeads?: number } = {},
  ) {
    if (options.cache) this.cache = options.cache(this.state)
    this.maxHeads = options.maxHeads ?? DEFAULT_MAX_HEADS
  }

  /**
   * Fetches the code that runs batches and makes the runner; undefined once it is here. The store
   * awaits it with a call's own code, so calls issued in one tick still reach the queue together.
   */
  prepare(): Promise<void> | undefined {
    if (this.batches) return undefined
    return (this.making ??= this.batchCode().then(
      (make) => void (this.batches = make(this)),
      (error: unknown) => {
        this.making = undefined
        throw error
      },
    ))
  }

  /**
   * After loads and commits: the cache gives back what passed its budget, and, once nothing is
   * queued or in flight (no batch holds a head it read), the working set what passed its bound.
   * @internal
   */
  trim(): void {
    this.cache?.trim((id) => this.loading.has(id))
    if (this.state.partial && !this.running && this.state.sessions.size > this.maxHeads) {
      const gone = this.state.trimHeads(
        this.maxHeads,
        (id) => this.loading.has(id) || this.heading.has(id) || this.keep?.(id) === true,
      )
      if (this.cache) for (const id of gone) this.cache.forget(id)
    }
  }

  /** @internal Keeps the cache's accounting in step with what a commit or a fold changed. */
  measure(changes: ReadonlyMap<string, SessionChange>): void {
    // A head read in flight may predate this change: its answer is dropped (read again on use).
    if (this.heading.size)
      for (const id of changes.keys()) if (this.heading.has(id)) this.heading.get(id)!.stale = true
    for (const touched of this.pageReads) for (const id of changes.keys()) touched.add(id)
    const cache = this.cache
    if (!cache) {
      this.trim()
      return
    }
    for (const [id, c] of changes) {
      if (c.head === null) cache.forget(id)
      else if (c.reloaded) cache.loaded(id)
      else if (c.added.length || c.updated.length) cache.grew(id, [...c.added, ...c.updated])
    }
    this.trim()
  }

  async open(): Promise<void> {
    const heads = await this.storage.open()
    this.state.partial = this.storage.paged !== undefined
    this.state.load(heads)
  }

  /**
   * Reads a session's head into the working set once, outside any transaction (first use over
   * a storage with paged reads); nothing when it is held, or when every head is. A session a
   * commit changed while its head was read is left to its next use. Resolves with the head as
   * held (or read) then, undefined for no such session: the working set may let go of it again
   * before the caller runs.
   */
  ensureHead(session_id: string): Promise<SessionHead | undefined> {
    const paged = this.storage.paged
    const held = this.state.sessions.get(session_id)
    if (!paged || !this.state.partial || held) return Promise.resolve(held?.head)
    let read = this.heading.get(session_id)
    if (!read) {
      const r: { p: Promise<SessionHead | undefined>; stale: boolean } = {
        p: Promise.resolve(undefined),
        stale: false,
      }
      r.p = paged
        .head(session_id)
        .then((head) => {
          // A commit meanwhile decided what is held (or that it is gone): that is the answer.
          if (r.stale) return this.state.sessions.get(session_id)?.head
          if (head && !this.state.sessions.has(session_id)) this.state.sessions.set(session_id, { head })
          return this.state.sessions.get(session_id)?.head ?? head
        })
        .finally(() => {
          this.heading.delete(session_id)
          this.trim()
        })
      this.heading.set(session_id, (read = r))
    }
    return read.p
  }

  /**
   * Reads a page of heads (a live list's) and lets them seed the working set: the chat an app
   * opens next is most often one of them, and then needs no head read of its own. Only while
   * the working set has room (it never grows past `maxHeads` this way), never over a head held
   * (commits keep held heads current: the page's copy is at best as new), and never a head a
   * commit touched while the page was read (the page's copy may predate that commit, the same
   * rule as `ensureHead`'s). A batch built on a seeded head still checks it inside its
   * transaction, as for any held head.
   */
  async readPage(read: () => Promise<SessionHead[]>): Promise<SessionHead[]> {
    const touched = new Set<string>()
    this.pageReads.add(touched)
    try {
      const heads = await read()
      const state = this.state
      if (state.partial)
        for (const head of heads) {
          if (state.sessions.size >= this.maxHeads) break
          const id = head.meta.session_id
          if (!touched.has(id) && !state.sessions.has(id)) state.sessions.set(id, { head })
        }
      return heads
    } finally {
      this.pageReads.delete(touched)
    }
  }

  /** Queues a call, settling the caller's own `resolve`/`reject` (the store's calls: no promise of its own). */
  enqueue<K extends FunctionId>(
    fn: K,
    req: FunctionMap[K][0],
    guard: CallGuard | undefined,
    resolve: (value: FunctionMap[K][1]) => void,
    reject: (error: unknown) => void,
  ): void {
    this.queue.push({
      fn,
      source: 'local',
      req: req as Pending['req'],
      guard,
      resolve: resolve as Pending['resolve'],
      reject,
    })
    this.kick()
  }

  /**
   * Queues an internal write touching `sessions` that runs in order with the operations. Remote
   * writes (changes pulled from a server) get batches of their own, so commit hooks can tell them
   * from local ones. `rewrite`: the write only rewrites that message (a recipe update), so it
   * waits and gathers behind a batch writing it as `updateMessage` calls do.
   */
  submitInternal<T>(
    sessions: readonly string[],
    run: (d: Overlay) => T | Promise<T>,
    source: ChangeSource = 'local',
    rewrite?: { session_id: string; entry_id: string },
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      this.queue.push({
        fn: 'internal',
        source,
        run,
        sessions,
        req: rewrite ?? {},
        resolve: resolve as Pending['resolve'],
        reject,
      })
      this.kick()
    })
  }

  /** Resolves once everything issued so far has been committed (or failed). */
  async flush(): Promise<void> {
    while (this.running) await this.running
  }

  /** Everything issued in this tick becomes one batch, started on the next microtask. */
  private kick(): void {
    this.running ??= new Promise((resolve) => (this.idle = resolve))
    // The call just queued waits behind a batch with all those queued before it: `pump` would
    // start nothing now.
    if (this.scheduled || this.batches?.holds()) return
    this.scheduled = true
    queueMicrotask(() => {
      this.scheduled = false
      this.pump()
    })
  }

  /**
   * Starts the next batch. Until the batch runner is here, fetches it; a failed fetch fails what
   * is queued, and the next call tries again.
   */
  private pump(): void {
    if (this.batches) return this.batches.pump()
    this.prepare()!.then(
      () => this.pump(),
      (error: unknown) => {
        for (const p of this.queue.splice(0)) p.reject(error)
        const idle = this.idle
        this.running = this.idle = undefined
        idle?.()
      },
    )
  }

  /**
   * The newest overlay handed to the storage and not yet folded in (see `batches.ts`): undefined
   * when none is (nothing is in flight before the batch runner is here).
   */
  pendingOverlay(): Overlay | undefined {
    return this.batches?.pendingOverlay()
  }

  /**
   * A session as it will be once the writes in flight commit, for optimistic live queries: `s`
   * itself while nothing is in flight.
   */
  pendingView(s: SessionState | undefined, session_id: string): SessionState | undefined {
    return this.batches ? this.batches.pendingView(s, session_id) : s
  }

  /** Settles once the entry loads in flight now have settled (what a first screen waits for). */
  loads(): Promise<unknown> {
    return Promise.allSettled(this.loading.values())
  }

  /** Loads a session's entries into memory once (first access), every one opened. */
  async ensureLoaded(session_id: string): Promise<void> {
    // A commit or a trim may take the session's entries back while they are opened: a few turns.
    for (let turn = 0; turn < OPEN_TURNS; turn++) {
      await this.load(session_id)
      const s = this.state.sessions.get(session_id)
      if (!s?.sealed?.size) return
      let p = this.opening.get(s)
      if (!p) {
        p = this.openEntries(session_id).finally(() => this.opening.delete(s))
        this.opening.set(s, p)
      }
      await p
    }
    if (!opened(this.state.sessions.get(session_id)) && this.state.sessions.has(session_id))
      throw new SessionError(
        'session/storage',
        `session ${session_id}: its entries kept changing while they were read`,
      )
  }

  /**
   * Loads a session's entries into memory once (first access), leaving those of an encrypted
   * store sealed (see `model/sealed-entry.ts`): for reads that open what they return (`openEntries`).
   */
  ensureHeld(session_id: string): Promise<void> {
    return this.load(session_id)
  }

  /**
   * Opens held sealed entries of a session (`entries`, or every one), all in one batch, and
   * keeps them opened in memory in their place. An entry replaced meanwhile (a commit) is left
   * as it is now; a session let go of meanwhile (a lock, a trim) takes nothing in. Nothing is
   * taken in when one does not open: that read fails with `session/integrity`.
   */
  async openEntries(session_id: string, entries?: Iterable<SessionEntry>): Promise<void> {
    const s = this.state.sessions.get(session_id)
    const openEntries = this.storage.openEntries
    if (!s?.entries || !s.sealed?.size || !openEntries) return
    const held = s.entries
    const sealed = s.sealed
    const todo: SessionEntry[] = []
    if (entries) {
      const seen = new Set<string>()
      for (const e of entries)
        if (sealed.has(e.id) && !seen.has(e.id) && held.get(e.id) === e) {
          todo.push(e)
          seen.add(e.id)
        }
    } else for (const id of sealed) todo.push(held.get(id)!)
    if (!todo.length) return
    const plain = await openEntries.call(this.storage, session_id, todo)
    if (this.state.sessions.get(session_id) !== s || s.entries !== held) return
    const before: SessionEntry[] = []
    const after: SessionEntry[] = []
    for (let i = 0; i < todo.length; i++) {
      const e = todo[i]
      if (held.get(e.id) !== e) continue
      held.set(e.id, plain[i])
      sealed.delete(e.id)
      before.push(e)
      after.push(plain[i])
    }
    this.cache?.opened(session_id, before, after)
    // Live queries wait for a session opened whole (they read every entry): it is now.
    if (!sealed.size && after.length)
      this.publish(
        'local',
        new Map([[session_id, { session_id, head: undefined, added: [], updated: [], reloaded: true }]]),
        [],
      )
  }

  /** Loads a session's entries into memory once (first access), as the storage holds them. */
  private load(session_id: string): Promise<void> {
    if (this.state.partial && !this.state.sessions.has(session_id))
      return this.ensureHead(session_id).then(() =>
        this.state.sessions.has(session_id) ? this.load(session_id) : undefined,
      )
    this.state.use(session_id)
    const s = this.state.sessions.get(session_id)
    this.cache?.touch(session_id)
    if (!s || s.entries) return Promise.resolve()
    let p = this.loading.get(session_id)
    if (!p) {
      // The first part read is indexed (out of sight) while the browser reads the rest (see `Storage.entries`).
      let part: SessionState | undefined
      const storage = this.storage
      // An encrypted store's entries come sealed, opened by the reads that return them.
      const read = storage.sealedEntries ? storage.sealedEntries.bind(storage) : storage.entries.bind(storage)
      p = read(
        session_id,
        s.head.meta.message_count,
        (first) => void (part = new State().setSession(s.head, first)),
      )
        .then((entries) => {
          const held = this.state.sessions.get(session_id)
          if (held && !held.entries) {
            this.state.setSession(held.head, entries, part)
            this.cache?.loaded(session_id)
            this.publish(
              'local',
              new Map([
                [session_id, { session_id, head: undefined, added: [], updated: [], reloaded: true }],
              ]),
              [],
            )
          }
        })
        .finally(() => {
          this.loading.delete(session_id)
          this.trim()
        })
      this.loading.set(session_id, p)
    }
    return p
  }

  /** Applies changes made elsewhere (another tab, a server) and announces them. */
  applyExternal(source: ChangeSource, payload: ChangePayload, events: readonly EventEnvelope[]): Commit {
    const changes = fold(this.state, payload, false)
    this.measure(changes)
    return this.publish(source, changes, events)
  }

  /** @internal */
  publish(
    source: ChangeSource,
    changes: Map<string, SessionChange>,
    events: readonly EventEnvelope[],
  ): Commit {
    const commit: Commit = { source, changes, events }
    if (changes.size || events.length) this.commits.next(commit)
    return commit
  }
}
