import { Subject } from 'rxjs'
import type { EntryCache } from './cache.js'
import { fold, type ChangePayload, type Commit, type ChangeSource, type SessionChange } from './changes.js'
import type { OpContext } from '../model/context.js'
import type { Draft } from './overlay.js'
import type { EventEnvelope, FunctionId, FunctionMap } from '../model/model.js'
import { once, type Once } from '../util/once.js'
import { State, type SessionState } from './state.js'
import type { SessionHead, SideWrite, Storage } from '../storage/seam.js'

export interface Pending {
  fn: FunctionId | 'internal'
  /** Who the write is for: local operations are recorded for sync, remote ones are not. */
  source: ChangeSource
  /** Sessions the step touches (read fresh from disk inside the transaction). */
  sessions?: readonly string[]
  /** Internal writes (bulk import, replication) bring their own step. */
  run?: (d: Draft) => unknown
  /** An internal write whose `req` names an `entry_id` only rewrites that message (a recipe update): it gathers as updates do. */
  req: { session_id?: string; entry_id?: string }
  guard?: CallGuard
  resolve(value: unknown): void
  reject(error: unknown): void
}

/** A batch handed to the storage, until its callers are settled. */
export interface Flight {
  /** The batch started before this one, while it is not settled. */
  prev?: Flight
  done: Promise<void>
  /** When it started (`performance.now()`): updates held behind it gather until a little after (see `gathers`). */
  started: number
  /** The draft whose writes are in the transaction, once they are (the next batch builds on it). */
  draft?: Draft
  /** The draft that committed: a batch built on this one checks it is the one it built on. */
  committed?: Draft
  /**
   * Every session the batch may write, when that is known before it runs (reads write none; a
   * replicated or imported step names its sessions); undefined when not (a fork or a create
   * makes a session under an id chosen inside it). Reads of other sessions need not wait for it
   * (see `overtake` in `engine-batches.ts`).
   */
  writes?: ReadonlySet<string>
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
export type CommitHook = (applied: readonly AppliedOp[], draft: Draft, source: ChangeSource) => readonly SideWrite[]

/**
 * Write halves fetched with the batch code (a storage's commits, the relay's sending): each adds
 * its own when it is made, so an app fetches only those of what it uses, all on the first write.
 */
export const engineWrites = new Set<Once<unknown>>()

/**
 * The code that runs batches (`Engine.prototype.pump` and what it calls), fetched on the first
 * call or by the store's prefetch. The store awaits it with the call's own code, so calls issued
 * in one tick still reach the queue together.
 */
export const engineBatches = once(() =>
  Promise.all([import('./batches.js').then((m) => m.install()), ...[...engineWrites].map((o) => o.load())]).then(() => true))

/**
 * The group-commit engine. Operations queue up; everything queued in one tick runs as one batch
 * in one storage transaction. A batch over sessions held in memory is built from memory and its
 * transaction checks their heads before committing, without waiting for the read (a head another
 * tab changed aborts it, and it runs again reading heads from disk): one round trip per awaited
 * append, and another tab's commit is still seen before deciding a parent. On a storage that
 * keeps transactions in order (IndexedDB) the next batch is built on the draft of the one
 * committing and handed over at once; two in flight at most, so what arrives meanwhile gathers:
 * a burst of streamed updates still costs a few transactions.
 *
 * This file holds what showing a transcript needs (opening, loading entries, folding other tabs'
 * commits, the queue); running batches is in `engine-batches.ts`, fetched on the first call (see
 * `engineBatches`), so an app's first screen does not wait for the code that writes.
 */
export class Engine {
  readonly state = new State()
  readonly commits = new Subject<Commit>()
  readonly hooks: CommitHook[] = []
  protected queue: Pending[] = []
  /** Resolves when the queue is empty and nothing is in flight (`flush`). */
  protected running: Promise<void> | undefined
  protected idle: (() => void) | undefined
  protected scheduled = false
  /** Batches handed to the storage and not yet settled, oldest first: at most two. */
  protected flights: Flight[] = []
  /**
   * How many queued calls `rewrites` found to rewrite what `draft` writes, and when `draft`'s
   * batch started (`since`).
   */
  protected rewritten: { draft?: Draft; count: number; since?: number } = { count: 0 }
  /** The timer that starts the updates gathering behind a committed batch (see `gathers`). */
  // Declared only (no class field): startup code pays no bytes for what the batch code sets.
  protected declare gathering: ReturnType<typeof setTimeout> | undefined
  /** Batches that found a stale head inside their transaction and ran again (tests read it). */
  reruns = 0
  /**
   * Sessions whose writes were just handed to the storage, before they commit (`failed`: a batch
   * failed and its writes are gone), for live queries that opt in to optimistic values
   * (`pendingDraft`). Events and the other live queries wait for the commit.
   */
  readonly pending = new Subject<{ readonly sessions: ReadonlySet<string>; readonly failed: boolean }>()
  protected loading = new Map<string, Promise<void>>()
  /**
   * Set by the store: runs `run` in issue order with the store's calls (which reach the engine in
   * ticks, a microtask after they are issued). Writes submitted outside `store.call` (a recipe
   * update) go through it, so they keep their place among the calls issued before them.
   */
  declare inOrder?: <T>(run: () => Promise<T>) => Promise<T>
  /** Counts storage transactions (benchmarks report it). */
  transactions = 0
  /** With a byte budget, idle sessions' entries leave memory (see `EntryCache`). */
  readonly cache?: EntryCache

  constructor(
    readonly storage: Storage,
    readonly ctx: OpContext,
    /** `cache` makes the `EntryCache` (its code is fetched only by stores that ask for one). */
    options: { cache?: (state: State) => EntryCache } = {},
  ) {
    if (options.cache) this.cache = options.cache(this.state)
  }

  /** After loads and commits: the cache gives back what passed its budget. */
  protected trim(): void {
    this.cache?.trim((id) => this.loading.has(id))
  }

  /** Keeps the cache's accounting in step with what a commit or a fold changed. */
  protected measure(changes: ReadonlyMap<string, SessionChange>): void {
    const cache = this.cache
    if (!cache) return
    for (const [id, c] of changes) {
      if (c.head === null) cache.forget(id)
      else if (c.reloaded) cache.loaded(id)
      else if (c.added.length || c.updated.length) cache.grew(id, [...c.added, ...c.updated])
    }
    this.trim()
  }

  async open(): Promise<void> {
    this.state.load(await this.storage.open())
  }

  /** Queues a call, settling the caller's own `resolve`/`reject` (the store's calls: no promise of its own). */
  enqueue<K extends FunctionId>(fn: K, req: FunctionMap[K][0], guard: CallGuard | undefined, resolve: (value: FunctionMap[K][1]) => void, reject: (error: unknown) => void): void {
    this.queue.push({ fn, source: 'local', req: req as Pending['req'], guard, resolve: resolve as Pending['resolve'], reject })
    this.kick()
  }

  /**
   * Queues an internal write touching `sessions` that runs in order with the operations. Remote
   * writes (changes pulled from a server) get batches of their own, so commit hooks can tell them
   * from local ones. `rewrite`: the write only rewrites that message (a recipe update), so it
   * waits and gathers behind a batch writing it as `updateMessage` calls do.
   */
  submitInternal<T>(sessions: readonly string[], run: (d: Draft) => T, source: ChangeSource = 'local', rewrite?: { session_id: string; entry_id: string }): Promise<T> {
    return new Promise((resolve, reject) => {
      this.queue.push({ fn: 'internal', source, run, sessions, req: rewrite ?? {}, resolve: resolve as Pending['resolve'], reject })
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
    // `holds` (the batch code's, absent until it is here): the call just queued waits behind a
    // batch with all those queued before it, so `pump` would start nothing now.
    if (this.scheduled || (this as { holds?: () => boolean }).holds?.()) return
    this.scheduled = true
    queueMicrotask(() => {
      this.scheduled = false
      this.pump()
    })
  }


  /**
   * Starts the next batch. Until the batch half of the engine is here, fetches it (installing it
   * replaces this method); a failed fetch fails what is queued, and the next call tries again.
   */
  protected pump(): void {
    engineBatches.load()?.then(
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
   * The newest draft handed to the storage and not yet folded in (see `engine-batches.ts`):
   * undefined until the batch code is here (nothing is in flight before it runs a batch).
   */
  pendingDraft(): Draft | undefined {
    return undefined
  }

  /**
   * A session as it will be once the writes in flight commit, for optimistic live queries: `s`
   * itself until the batch code is here (nothing is in flight before it runs a batch).
   */
  pendingView(s: SessionState | undefined, _session_id: string): SessionState | undefined {
    return s
  }

  /** Settles once the entry loads in flight now have settled (what a first screen waits for). */
  loads(): Promise<unknown> {
    return Promise.allSettled(this.loading.values())
  }

  /** Loads a session's entries into memory once (first access). */
  ensureLoaded(session_id: string): Promise<void> {
    const s = this.state.sessions.get(session_id)
    this.cache?.touch(session_id)
    if (!s || s.entries) return Promise.resolve()
    let p = this.loading.get(session_id)
    if (!p) {
      // The first part read is indexed (out of sight) while the browser reads the rest (see `Storage.entries`).
      let part: SessionState | undefined
      p = this.storage.entries(session_id, s.head.meta.message_count, (first) => void (part = new State().setSession(s.head, first))).then((entries) => {
        const held = this.state.sessions.get(session_id)
        if (held && !held.entries) {
          this.state.setSession(held.head, entries, part)
          this.cache?.loaded(session_id)
          this.publish('local', new Map([[session_id, { session_id, head: undefined, added: [], updated: [], reloaded: true }]]), [])
        }
      }).finally(() => {
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

  protected publish(source: ChangeSource, changes: Map<string, SessionChange>, events: readonly EventEnvelope[]): Commit {
    const commit: Commit = { source, changes, events }
    if (changes.size || events.length) this.commits.next(commit)
    return commit
  }
}
