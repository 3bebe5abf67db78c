import type { ChangePayload, ChangeSource, SessionChange } from './changes.js'
import type { OpContext } from '../model/context.js'
import { Overlay } from './overlay.js'
import type { AppliedOp, Batches, Engine, Pending } from './engine.js'
import type { OperationTable } from './operation.js'
import { SessionError } from '../model/errors.js'
import { storageFailure } from '../model/storage-failure.js'
import { StaleHeadError } from '../storage/seam.js'
import { fold } from './changes.js'
import { jsonEqual } from '../model/json.js'
import type { FunctionId, SessionEntry } from '../model/model.js'
import { opened, type SessionState } from './state.js'
import { isUnopened } from '../model/sealed-entry.js'
import type { SessionHead, StorageReader } from '../storage/seam.js'

// The half of the engine that runs batches (reads through operations included: every call goes
// through a batch), fetched on the first call: showing a transcript needs none of it. The store
// makes it once its code is here and hands it to the engine (see `Batches` in `engine.ts`).

interface Scan {
  readonly touched: Set<string>
  readonly needEntries: Set<string>
  /**
   * Sessions some call reads every entry's content of (an operation that does not say which:
   * `OperationSpec.reads`; an internal step): an encrypted store opens them whole first.
   */
  readonly whole: Set<string>
  readonly writes: boolean
  readonly internal: boolean
  /** Some call reads a page of sessions (see `OperationSpec.page`). */
  readonly pages: boolean
}

const storageError = (cause: unknown): SessionError => storageFailure('write failed', cause)

/** A batch handed to the storage, until its callers are settled. */
export interface Flight {
  /** The batch started before this one, while it is not settled. */
  prev?: Flight
  done: Promise<void>
  /** When it started (`performance.now()`): updates held behind it gather until a little after (see `gathers`). */
  started: number
  /** The overlay whose writes are in the transaction, once they are (the next batch builds on it). */
  overlay?: Overlay
  /** The overlay that committed: a batch built on this one checks it is the one it built on. */
  committed?: Overlay
  /**
   * Every session the batch may write, when that is known before it runs (reads write none; a
   * replicated or imported step names its sessions); undefined when not (a fork or a create
   * makes a session under an id chosen inside it). Reads of other sessions need not wait for it
   * (see `overtake`).
   */
  writes?: ReadonlySet<string>
}

/** Runs the engine's queue in batches, one storage transaction each (see `Engine`). */
export class BatchRunner implements Batches {
  /** Batches handed to the storage and not yet settled, oldest first: at most two. */
  private flights: Flight[] = []
  /**
   * How many queued calls `rewrites` found to rewrite what `overlay` writes, and when `overlay`'s
   * batch started (`since`).
   */
  private rewritten: { overlay?: Overlay; count: number; since?: number } = { count: 0 }
  /** The timer that starts the updates gathering behind a committed batch (see `gathers`). */
  private gathering: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly engine: Engine,
    private readonly operations: OperationTable,
  ) {}

  /**
   * Starts the next batch when it may go: when nothing is in flight, or, on a storage that
   * keeps transactions in call order, while the one batch in flight commits if the next can be
   * built on that batch's overlay (then its transaction checks that the batch before committed
   * exactly that overlay, so a failure there never lets its writes land on a state that assumed
   * it). Two in flight at most: what arrives meanwhile gathers into the next batch.
   */
  pump(): void {
    if (this.flights.length) this.overtake()
    while (this.engine.queue.length) {
      const prev = this.flights.at(-1)
      if (prev && (this.flights.length > 1 || !prev.overlay || !this.engine.storage.ordered)) return
      const source = this.engine.queue[0].source
      let end = this.engine.queue.findIndex((p) => p.source !== source)
      if (end < 0) end = this.engine.queue.length
      if (prev && this.rewrites(end, prev.overlay!, prev.started)) return
      if (!prev && this.gathers(end)) return
      const calls = this.engine.queue.slice(0, end)
      const scan = this.scan(calls)
      if (prev && !this.buildsOn(calls, scan, prev.overlay!)) return
      const batch = this.engine.queue.splice(0, end)
      this.rewritten = { count: 0 }
      const flight: Flight = {
        prev,
        done: Promise.resolve(),
        started: performance.now(),
        writes: writesOf(this.operations, batch, scan),
      }
      this.flights.push(flight)
      flight.done = this.run(batch, source, scan, flight).finally(() => {
        this.flights.splice(this.flights.indexOf(flight), 1)
        const next = this.flights[0]
        // Folded in: the next batch reads the committed state instead (overlays never chain).
        if (next?.prev === flight) {
          next.prev = undefined
          if (next.overlay?.base === flight.overlay) next.overlay!.base = undefined
        }
        this.pump()
        if (!this.engine.queue.length && !this.flights.length) {
          const idle = this.engine.idle
          this.engine.running = this.engine.idle = undefined
          // Idle: the working set of heads may let go of what passed its bound.
          this.engine.trim()
          idle?.()
        }
      })
    }
  }

  /**
   * Answers at once, from the committed state, the queued reads of one session that no write
   * ahead of them (in flight or queued before them) may touch: such a read's answer is the same
   * whether it waits or not, so it does not wait for other sessions' commits (a server's other
   * principals: one principal's 1 MB push takes hundreds of milliseconds to commit, fsync or
   * database round trips included, and two may be in flight with more queued). Reads and writes
   * of one session keep their issue order, and nothing a read sees is uncommitted. A write whose
   * sessions are not known before it runs (`Flight.writes`, `writesOf`) stops the scan: what
   * follows it waits as before. A read that needs entries not yet in memory waits too (loading
   * them would let a later write commit before it reads).
   */
  private overtake(): void {
    const barred = new Set<string>()
    for (const f of this.flights) {
      if (!f.writes) return
      for (const id of f.writes) barred.add(id)
    }
    let answered: Pending[] | undefined
    let kept = 0
    for (let i = 0; i < this.engine.queue.length; i++) {
      const p = this.engine.queue[i]
      if (p.fn !== 'internal' && !this.operations[p.fn].write) {
        const id = p.req.session_id
        const held = typeof id === 'string' ? this.engine.state.sessions.get(id) : undefined
        if (
          SESSION_READS.has(p.fn) &&
          typeof id === 'string' &&
          !barred.has(id) &&
          // Not held: absent, unless heads are read on first use (then it waits for its read).
          (held ? !this.operations[p.fn].entries || opened(held) : !this.engine.state.partial)
        ) {
          ;(answered ??= []).push(p)
          continue
        }
      } else {
        const writes = writesOf(this.operations, [p])
        if (!writes) {
          // The rest keep their place behind a write of unknown reach.
          if (answered)
            for (let j = i; j < this.engine.queue.length; j++)
              this.engine.queue[kept++] = this.engine.queue[j]
          break
        }
        for (const id of writes) barred.add(id)
      }
      if (answered) this.engine.queue[kept] = p
      kept++
    }
    if (!answered) return
    this.engine.queue.length = kept
    const overlay = new Overlay(this.engine.state)
    for (const p of answered) {
      this.engine.cache?.touch(p.req.session_id!)
      this.settle(p, overlay)
    }
  }

  /**
   * Whether the first `end` queued calls only update messages the batch committing writes (a
   * reply streaming in, by `updateMessage` or a recipe). Such a batch waits for that one rather than starting beside it: its
   * updates then land in one rewrite of the entry instead of a transaction per few tokens, and
   * transactions, not tokens, are what a stream costs.
   */
  private rewrites(end: number, overlay: Overlay, since: number): boolean {
    // Every call arriving meanwhile asks again: only the calls not yet looked at are.
    const known = this.rewritten
    let i = known.overlay === overlay ? known.count : 0
    for (; i < end; i++) {
      const p = this.engine.queue[i]
      if (p.fn !== 'session::update-message' && (p.fn !== 'internal' || p.req.entry_id === undefined))
        return false
      const { session_id, entry_id } = p.req as { session_id: string; entry_id?: unknown }
      if (typeof entry_id !== 'string' || !overlay.entries.get(session_id)?.has(entry_id)) return false
    }
    this.rewritten = { overlay, count: end, since }
    return true
  }

  /**
   * Whether updates held back behind a batch that has just committed (see `rewrites`) wait a
   * little longer, until `GATHER_MS` after that batch started. A fast stream then commits at
   * most every `GATHER_MS` rather than once per IndexedDB round trip (well under a
   * millisecond): W3's 2,000 updates cost 20-45 transactions instead of 30-150, and each
   * transaction costs the page's main thread about 0.4 ms, as much as 30-40 updates (CPU
   * profile of W3 in Chromium). Calls that arrive when nothing is
   * committing never wait (a reply streaming at a model's pace, an awaited update), nor do
   * calls that are not such updates: with one in the queue, the batch starts at once.
   */
  private gathers(end: number): boolean {
    const held = this.rewritten
    if (held.overlay && this.rewrites(end, held.overlay, held.since!)) {
      // Each call of the stream asks: the clock is read only until the timer is set.
      if (this.gathering !== undefined) return true
      const wait = held.since! + GATHER_MS - performance.now()
      if (wait > 0) {
        this.gathering = setTimeout(() => {
          this.gathering = undefined
          this.pump()
        }, wait)
        return true
      }
    }
    if (this.gathering !== undefined) {
      clearTimeout(this.gathering)
      this.gathering = undefined
    }
    return false
  }

  /**
   * A stream's next update, with every call queued before it already held as a rewrite of the
   * batch committing (or of the one just committed, while `gathers` waits): what started it, or
   * the timer, starts them all, so the call asks for no `pump` of its own (W3: one microtask
   * and a queue scan less per token).
   */
  holds(): boolean {
    const held = this.rewritten
    const end = this.engine.queue.length
    if (!held.overlay || held.count !== end - 1) return false
    const prev = this.flights.at(-1)
    if (prev ? this.flights.length > 1 || prev.overlay !== held.overlay : this.gathering === undefined)
      return false
    return this.rewrites(end, held.overlay, held.since!)
  }

  /** What a batch touches, and whether it writes. */
  private scan(batch: readonly Pending[]): Scan {
    const touched = new Set<string>()
    const needEntries = new Set<string>()
    const whole = new Set<string>()
    let writes = false
    let internal = false
    let pages = false
    // A burst is mostly one function on one session: each is looked up once per run of them.
    let fn: Pending['fn'] | undefined
    let entries = false
    let all = false
    let last: string | undefined
    for (const p of batch) {
      if (p.fn !== fn) {
        fn = p.fn
        last = undefined
        if (fn === 'internal') {
          internal = writes = true
          entries = all = false
        } else {
          const op = this.operations[fn]
          if (op.write) writes = true
          if (op.pages) pages = true
          entries = op.entries
          all = entries && !op.reads
        }
      }
      if (p.sessions) {
        for (const id of p.sessions) {
          touched.add(id)
          needEntries.add(id)
          whole.add(id)
        }
      }
      // (A mention's view names its session `id`.)
      const id = p.fn === 'session::mention::get' ? (p.req as { id?: unknown }).id : p.req.session_id
      if (typeof id !== 'string' || id === last) continue
      last = id
      touched.add(id)
      if (entries) needEntries.add(id)
      if (all) whole.add(id)
    }
    return { touched, needEntries, whole, writes, internal, pages: pages && this.engine.state.partial }
  }

  /**
   * True when the batch can be run from memory (on `base`, the overlay of a batch still
   * committing, or on the committed state): every session it touches is either unknown here (it
   * must then be absent on disk too) or held with the entries it needs.
   */
  private fromMemory(scan: Scan, base: Overlay | undefined): boolean {
    // Over a storage with paged reads, a session neither held nor made by the batch before may
    // be on disk: its head is read inside the transaction (first use).
    if (this.engine.state.partial)
      for (const id of scan.touched)
        if (!this.engine.state.sessions.has(id) && (base ? base.head(id) === undefined : true)) return false
    for (const id of scan.needEntries) {
      const s = this.engine.state.sessions.get(id)
      // Entries held sealed (an encrypted store loads them so) serve calls that say what they
      // read, which `opening` opened; a call that reads every entry needs all of them opened.
      if (
        s &&
        (!s.entries || (s.sealed?.size && scan.whole.has(id))) &&
        (base ? base.head(id) !== undefined : true)
      )
        return false
    }
    return true
  }

  /**
   * Whether, on an encrypted store, a write batch must load or open entries before it runs
   * (see `opening`): a session it needs entries of is not held, one it reads whole holds some
   * sealed, or an entry whose content a call reads (`OperationSpec.reads`) is held sealed.
   */
  private opens(batch: readonly Pending[], scan: Scan): boolean {
    if (!this.engine.storage.sealedEntries || !scan.needEntries.size) return false
    const state = this.engine.state
    // Sessions this store wrote or opened hold no entry sealed: a burst on them looks no further.
    let sealed = false
    for (const id of scan.needEntries) {
      const s = state.sessions.get(id)
      if (s ? !s.entries || (s.sealed?.size && scan.whole.has(id)) : state.partial) return true
      if (s?.sealed?.size) sealed = true
    }
    return sealed && this.sealedReads(batch, scan.whole).size > 0
  }

  /**
   * The entries `calls` read the content of that are held sealed, by session, as their
   * `OperationSpec.reads` name them on the committed state (sessions in `whole` are opened
   * whole instead). Calls that may name more once those are opened go to `more`.
   */
  private sealedReads(
    calls: readonly Pending[],
    whole: ReadonlySet<string>,
    more?: Pending[],
  ): Map<string, SessionEntry[]> {
    const wanted = new Map<string, SessionEntry[]>()
    let held: Overlay | undefined
    for (const p of calls) {
      const id = p.req.session_id
      if (p.fn === 'internal' || typeof id !== 'string' || whole.has(id)) continue
      const reads = this.operations[p.fn].reads
      const sealed = this.engine.state.sessions.get(id)?.sealed
      if (!reads || !sealed?.size) continue
      let list: SessionEntry[] | undefined
      try {
        for (const e of reads((held ??= new Overlay(this.engine.state)), p.req as never, this.engine.ctx))
          if (sealed.has(e.id)) (list ??= []).push(e)
      } catch {
        // The call throws it again when it runs.
      }
      if (!list) continue
      if (more && this.operations[p.fn].readsMore) more.push(p)
      const all = wanted.get(id)
      if (all) all.push(...list)
      else wanted.set(id, list)
    }
    return wanted
  }

  /**
   * Loads the sessions a batch needs entries of (on an encrypted store: held sealed, or opened
   * whole for a session in `Scan.whole`) and opens, one batch of openings per session, the
   * entries its calls read (`OperationSpec.reads`), asking again those that may name more.
   */
  private async opening(batch: readonly Pending[], scan: Scan): Promise<void> {
    const { touched, needEntries, whole } = scan
    await Promise.all([
      ...[...needEntries].map((id) =>
        whole.has(id) ? this.engine.ensureLoaded(id) : this.engine.ensureHeld(id),
      ),
      ...[...touched].map((id) => this.engine.ensureHead(id)),
    ])
    // A read may learn what else it needs only from what it opened (the blocks of
    // `messagesTail` are cut by content): asked again until it names nothing still sealed
    // (`OperationSpec.readsMore`).
    let asking = batch
    for (let turn = 0; turn < READ_TURNS && asking.length; turn++) {
      const more: Pending[] = []
      const wanted = this.sealedReads(asking, whole, more)
      await Promise.all([...wanted].map(([id, entries]) => this.engine.openEntries(id, entries)))
      asking = more
    }
  }

  /**
   * A batch may start while `overlay`'s batch commits: plain writes that touch known sessions,
   * with nothing to open first.
   */
  private buildsOn(batch: readonly Pending[], scan: Scan, overlay: Overlay): boolean {
    return (
      scan.writes &&
      !scan.internal &&
      !scan.pages &&
      scan.touched.size > 0 &&
      this.fromMemory(scan, overlay) &&
      !this.opens(batch, scan)
    )
  }

  /**
   * Before a batch that reads pages of sessions (over a storage with paged reads), with nothing
   * in flight: reads each such call's page from disk, which then equals the committed state.
   * A call whose page cannot be read (a bad cursor, a filter past its budget) fails alone.
   */
  private async pages(batch: readonly Pending[], spare: number): Promise<void> {
    const paged = this.engine.storage.paged!
    await Promise.all(
      batch.map(async (p) => {
        if (p.fn === 'internal' || !this.operations[p.fn].pages) return
        const page = this.operations[p.fn].page as
          ((req: unknown, ctx: OpContext, spare: number) => Parameters<typeof paged.page>[0]) | undefined
        try {
          if (!page) throw new SessionError('session/storage', `${p.fn}: called before its code was fetched`)
          p.listed = (await paged.page(page(p.req, this.engine.ctx, spare))).map((h) => h.meta)
        } catch (error) {
          p.failure = error instanceof SessionError ? error : storageError(error)
        }
      }),
    )
  }

  /**
   * A batch of reads: the sessions loaded, and on an encrypted store the entries each call
   * returns opened (`OperationSpec.reads`; every entry for a call that does not say), one batch
   * of openings per session, before the calls run on the committed state. A call that still
   * met an entry nobody opened (its session changed meanwhile) runs again with all opened.
   */
  private async read(batch: Pending[], scan: Scan): Promise<void> {
    try {
      await this.opening(batch, scan)
    } catch (cause) {
      for (const p of batch) p.reject(storageError(cause))
      return
    }
    const overlay = new Overlay(this.engine.state)
    const again: Pending[] = []
    for (const p of batch) this.settle(p, overlay, again)
    if (!again.length) return
    try {
      await Promise.all(
        [...new Set(again.map((p) => p.req.session_id!))].map((id) => this.engine.ensureLoaded(id)),
      )
    } catch (cause) {
      for (const p of again) p.reject(storageError(cause))
      return
    }
    const fresh = new Overlay(this.engine.state)
    for (const p of again) this.settle(p, fresh)
  }

  private async run(batch: Pending[], source: ChangeSource, scan: Scan, flight: Flight): Promise<void> {
    const { touched, needEntries } = scan
    if (this.engine.cache) for (const id of touched) this.engine.cache.touch(id)
    if (this.engine.state.partial) for (const id of touched) this.engine.state.use(id)
    // The batch's own writes may push as many sessions out of a page as it touches (a created
    // session only adds one).
    if (scan.pages) await this.pages(batch, touched.size)
    if (!scan.writes) return this.read(batch, scan)
    // An encrypted store: the sessions written loaded sealed, and what the calls read opened.
    if (this.opens(batch, scan)) {
      try {
        await this.opening(batch, scan)
      } catch (cause) {
        for (const p of batch) p.reject(storageError(cause))
        return
      }
    }
    let overlay!: Overlay
    // Each call's answer (or error, where `failed[i]`), handed over once the batch committed.
    let results: unknown[] = []
    let failed: boolean[] = []
    let refreshed = new Map<string, SessionChange>()
    // Built from memory (no read to wait for in the transaction) until a head turns out stale.
    let fast = true
    // The session whose check failed: its copy is read again even if its head reads the same (a
    // storage that knows more than the head, such as a session's incarnation, said it differs).
    let suspect: string | undefined
    // Runs that met an entry held sealed that nothing opened (see `Unopened`), and the sessions
    // a read from disk opens whole: `scan.whole`, and those such a run met twice.
    let unopenedRuns = 0
    let whole = scan.whole
    for (;;) {
      const prev = flight.prev
      const base = prev?.overlay
      try {
        this.engine.transactions++
        await this.engine.storage.transact(async (reader) => {
          refreshed = new Map()
          const checked =
            fast &&
            reader.expect !== undefined &&
            this.fromMemory(scan, base) &&
            knowsHeads(reader, touched, base, this.engine.state)
          if (checked) {
            for (const id of touched) {
              const held = base ? base.head(id) : this.engine.state.sessions.get(id)?.head
              reader.expect!(id, (disk) => (!prev || prev.committed === base) && sameHead(held, disk), {
                head: held,
              })
            }
          } else {
            // Reading from disk needs the batch before to be settled: run again after it.
            if (prev) throw new StaleHeadError('')
            refreshed = await this.refresh(reader, touched, needEntries, whole, suspect)
          }
          overlay = new Overlay(this.engine.state, base)
          let flushStream: (() => void) | undefined
          // A burst of appends checked from memory hands its entries to the storage as it builds
          // them: the storage writes the first while the next are built (W2: 10,000 in a tick).
          if (
            checked &&
            !prev &&
            batch.length >= STREAM_MIN &&
            !this.engine.hooks.length &&
            reader.stream &&
            batch.every((p) => p.fn === 'session::append')
          ) {
            const put = reader.stream()
            if (put) ({ onEntry: overlay.onEntry, flush: flushStream } = holdingBackNewest(put))
          }
          // What commit hooks are shown: gathered only when there is one to show it to.
          const applied: AppliedOp[] | undefined = this.engine.hooks.length ? [] : undefined
          results = new Array(batch.length)
          failed = new Array(batch.length).fill(false)
          for (let i = 0; i < batch.length; i++) {
            try {
              const result = this.execute(batch[i], overlay, applied)
              // An internal step that works in slices (see `Pending.run`); an operation's answer
              // is never awaited here (a burst of appends costs no microtask per call).
              results[i] = batch[i].fn === 'internal' && result instanceof Promise ? await result : result
            } catch (error) {
              results[i] = error
              failed[i] = true
            }
          }
          overlay.onEntry = undefined
          // A call met an entry held sealed (what its session held changed after `opening`,
          // or its `reads` missed one): nothing of the batch is written, and it runs again.
          const unopened = unopenedSessions(batch, results, failed)
          if (unopened) throw new Unopened(unopened)
          flushStream?.()
          // A session this batch made under an id chosen inside it (a create, a fork's copy) is
          // checked absent too: one stamp read, which the storage would spend anyway to find the
          // session's incarnation, and once the commit completes a storage keeping trust
          // (IndexedDB under its writer lock) knows the session, so the next batch on it skips
          // the read and commits at once (W2: a burst of appends right after `create`).
          if (checked) {
            for (const id of overlay.heads.keys()) {
              if (
                !touched.has(id) &&
                (base ? base.head(id) : this.engine.state.sessions.get(id)?.head) === undefined
              ) {
                reader.expect!(id, (disk) => (!prev || prev.committed === base) && disk === undefined, {
                  head: undefined,
                })
              }
            }
          }
          const side = applied ? this.engine.hooks.flatMap((hook) => hook(applied, overlay, source)) : []
          flight.overlay = overlay
          // The next batch may be built on this one now (its transaction queues behind ours).
          queueMicrotask(() => this.pump())
          if (this.engine.pending.observed)
            this.engine.pending.next({ sessions: sessionsOf(overlay), failed: false })
          return overlay.writeSet(side)
        })
      } catch (cause) {
        flight.overlay = undefined
        if (cause instanceof Unopened && unopenedRuns++ < UNOPENED_RUNS) {
          // Once the batch before settled (the sessions read fresh are published now): the
          // first time, its calls are asked again what they read, that is opened, and the batch
          // runs from memory; the next, it reads those sessions from disk opened whole.
          await prev?.done
          flight.prev = undefined
          if (refreshed.size) this.engine.publish('tab', refreshed, [])
          if (unopenedRuns === 1) {
            try {
              await this.opening(batch, scan)
            } catch (error) {
              for (const p of batch) p.reject(storageError(error))
              return
            }
            fast = true
            suspect = undefined
          } else {
            whole = new Set([...whole, ...cause.sessions])
            fast = false
          }
          continue
        }
        if (cause instanceof StaleHeadError && fast) {
          // Something changed under the batch (another tab, or the batch before failed): run
          // it again once the batch before settled, reading the heads from disk.
          this.engine.reruns++
          fast = false
          suspect = cause.session_id
          await prev?.done
          flight.prev = undefined
          continue
        }
        await prev?.done
        if (refreshed.size) this.engine.publish('tab', refreshed, [])
        if (this.engine.pending.observed) this.engine.pending.next({ sessions: touched, failed: true })
        for (const p of batch) p.reject(storageError(cause))
        return
      }
      break
    }
    flight.committed = overlay
    // Commits are announced in order: the batch before first (no await without one: each
    // await is a hop between the commit and its caller).
    if (flight.prev) await flight.prev.done
    overlay.base = undefined
    const changes = fold(this.engine.state, toPayload(overlay), true)
    // A bulk-loaded session stays on disk until something reads it: importing a large archive
    // must not leave all of it in memory.
    for (const id of overlay.preloaded.keys()) {
      const s = this.engine.state.sessions.get(id)
      if (s) this.engine.state.sessions.set(id, { head: s.head })
    }
    // A session read again from disk that the batch also wrote: its change says only what the
    // batch wrote (what other tabs are relayed), so the re-read, which may bring another
    // tab's writes, is announced on its own, as another tab's commit, for live queries.
    const reread = new Map<string, SessionChange>()
    for (const [id, c] of refreshed) (changes.has(id) ? reread : changes).set(id, c)
    this.engine.measure(changes)
    if (reread.size) {
      this.engine.measure(reread)
      this.engine.publish('tab', reread, [])
    }
    this.engine.publish(source, changes, overlay.events)
    for (let i = 0; i < batch.length; i++) {
      if (failed[i]) batch[i].reject(results[i])
      else batch[i].resolve(results[i])
    }
  }

  /**
   * Inside the transaction: compares the touched sessions with what is on disk and reloads any
   * that another tab changed since this store last saw them.
   */
  private async refresh(
    reader: StorageReader,
    touched: Set<string>,
    needEntries: Set<string>,
    whole: ReadonlySet<string>,
    suspect?: string,
  ): Promise<Map<string, SessionChange>> {
    const out = new Map<string, SessionChange>()
    const ids = [...touched]
    const heads = await Promise.all(ids.map((id) => reader.head(id)))
    await Promise.all(
      ids.map(async (id, i) => {
        const disk = heads[i]
        const held = this.engine.state.sessions.get(id)
        if (!disk) {
          if (held) {
            this.engine.state.sessions.delete(id)
            out.set(id, { session_id: id, head: null, added: [], updated: [], reloaded: true })
          }
          return
        }
        // A session deleted and created again elsewhere starts its versions over: the same `v`
        // may be another session (ids are chosen by callers), so the head must match as well.
        const fresh = held !== undefined && id !== suspect && sameHead(held.head, disk)
        if (fresh && (opened(held) || (held.entries && !whole.has(id)) || !needEntries.has(id))) return
        if (needEntries.has(id) || held?.entries) {
          // An encrypted store's entries are read sealed unless a call reads them all: a call
          // that reads one held so runs again once it is opened (`Unopened`). Those opened
          // before whose record is unchanged on disk stay opened (`Storage.sealedEntries`).
          const entries =
            reader.sealedEntries && !whole.has(id)
              ? await reader.sealedEntries(id, held?.entries)
              : await reader.entries(id)
          this.engine.state.setSession(disk, entries)
        } else this.engine.state.sessions.set(id, { head: disk })
        out.set(id, { session_id: id, head: disk, added: [], updated: [], reloaded: true })
      }),
    )
    return out
  }

  /**
   * The newest overlay handed to the storage and not yet folded in, read over everything before
   * it: what the state will be once the batches in flight commit. Undefined when none is, or
   * when the batch it was built on failed (it is going to run again).
   */
  pendingOverlay(): Overlay | undefined {
    for (let i = this.flights.length - 1; i >= 0; i--) {
      const f = this.flights[i]
      if (!f.overlay) continue
      const base = f.overlay.base
      return !base || f.prev?.overlay === base ? f.overlay : undefined
    }
    return undefined
  }

  /**
   * Runs one operation on the overlay and returns its answer (throws its error); the caller is
   * settled with it once the batch committed.
   */
  private execute(p: Pending, overlay: Overlay, applied: AppliedOp[] | undefined): unknown {
    if (p.fn === 'internal') return p.run!(overlay)
    if (p.failure !== undefined) throw p.failure
    if (p.listed) {
      overlay.listed = p.listed
      try {
        return this.apply(p as Pending & { fn: FunctionId }, overlay, applied)
      } finally {
        overlay.listed = undefined
      }
    }
    return this.apply(p as Pending & { fn: FunctionId }, overlay, applied)
  }

  private apply(
    p: Pending & { fn: FunctionId },
    overlay: Overlay,
    applied: AppliedOp[] | undefined,
  ): unknown {
    if (p.guard) {
      const stop = p.guard(typeof p.req.session_id === 'string' ? overlay.head(p.req.session_id) : undefined)
      if (stop) return stop.answer
    }
    const op = this.operations[p.fn] as {
      run?: (d: Overlay, req: unknown, ctx: OpContext) => unknown
      write: boolean
    }
    // The store fetches an operation's code before its first call reaches the queue.
    if (!op.run) throw new SessionError('session/storage', `${p.fn}: called before its code was fetched`)
    const response = op.run(overlay, p.req, this.engine.ctx)
    if (op.write && applied) applied.push({ fn: p.fn, request: p.req, response })
    return response
  }

  /** Runs a read and settles its caller; one that met an entry held sealed goes to `again`, when given. */
  private settle(p: Pending, overlay: Overlay, again?: Pending[]): void {
    let response: unknown
    try {
      response = this.execute(p, overlay, undefined)
    } catch (error) {
      if (again && isUnopened(error) && typeof p.req.session_id === 'string') return void again.push(p)
      return p.reject(error)
    }
    p.resolve(response)
  }

  pendingView(s: SessionState | undefined, session_id: string): SessionState | undefined {
    return pendingView(this.pendingOverlay(), s, session_id)
  }
}

/**
 * How many times a read is asked what it needs opened (see `OperationSpec.reads`) before it runs:
 * one that still meets an entry held sealed then has its session opened whole.
 */
const READ_TURNS = 8

/**
 * What a write batch's transaction is aborted with when a call met an entry held sealed that
 * nothing opened: it runs again once what its calls read is opened (see `run`).
 */
class Unopened extends Error {
  constructor(readonly sessions: ReadonlySet<string>) {
    super('a call read an entry held sealed')
  }
}

/** How many times a write batch runs again for `Unopened` (the last reading its sessions opened whole). */
const UNOPENED_RUNS = 2

/** The sessions of the calls that failed reading an entry held sealed; undefined when none did. */
function unopenedSessions(
  batch: readonly Pending[],
  results: readonly unknown[],
  failed: readonly boolean[],
): Set<string> | undefined {
  let out: Set<string> | undefined
  for (let i = 0; i < batch.length; i++)
    if (failed[i] && isUnopened(results[i]) && typeof batch[i].req.session_id === 'string')
      (out ??= new Set()).add(batch[i].req.session_id!)
  return out
}

/** How long after a batch started the updates held behind it wait to start the next (see `gathers`). */
export const GATHER_MS = 2

/**
 * A streamed batch hands its entries to the storage this many at a time, back to back: a put
 * issued right after another costs the page less than one issued between two operations (W2D,
 * four alternated pairs: 310-379 ms inside the 10,000 puts instead of 330-407, their span
 * 342-424 ms instead of 407-495; the commit, set by IndexedDB's backend, did not move).
 */
const STREAM_RUN = 64

/** Batches of at least this many calls stream their entries (see `StorageReader.stream`); a single awaited append never does. */
const STREAM_MIN = 32

/**
 * Passes each session's entries on once the next one arrives, `STREAM_RUN` at a time (`flush`
 * hands over the rest): the newest of each session stays behind and goes out with the batch's
 * writes, where the storage stamps it (IndexedDB puts the session's new state on its newest
 * entry), so no entry is written twice.
 */
function holdingBackNewest(put: (session_id: string, entry: SessionEntry) => void): {
  onEntry: (session_id: string, entry: SessionEntry) => void
  flush: () => void
} {
  const newest = new Map<string, SessionEntry>()
  const held: Array<[string, SessionEntry]> = []
  const flush = (): void => {
    for (const [session_id, entry] of held) put(session_id, entry)
    held.length = 0
  }
  return {
    onEntry: (session_id, entry) => {
      const prev = newest.get(session_id)
      if (prev && prev.id !== entry.id) {
        held.push([session_id, prev])
        if (held.length === STREAM_RUN) flush()
      }
      newest.set(session_id, entry)
    },
    flush,
  }
}

/**
 * Reads that read nothing but the session `req.session_id` names (its head, its entries): one
 * may be answered ahead of writes to other sessions (see `overtake`).
 */
const SESSION_READS: ReadonlySet<Pending['fn']> = new Set([
  'session::get',
  'session::get-message',
  'session::messages',
  'session::messages-tail',
  'session::messages-range',
])

/**
 * Every session `batch` may write, when that is known before it runs: reads write none, and an
 * internal step names its sessions (`Pending.sessions`: what it reads fresh is what it writes).
 * Undefined for an operation's write: some make sessions under ids chosen inside them.
 */
function writesOf(
  operations: OperationTable,
  batch: readonly Pending[],
  scan?: Scan,
): ReadonlySet<string> | undefined {
  if (scan && !scan.writes) return new Set()
  const out = new Set<string>()
  for (const p of batch) {
    if (p.fn !== 'internal') {
      if (operations[p.fn].write) return undefined
      continue
    }
    if (!p.sessions) return undefined
    for (const id of p.sessions) out.add(id)
    if (typeof p.req.session_id === 'string') out.add(p.req.session_id)
  }
  return out
}

/** The sessions a overlay writes. */
function sessionsOf(overlay: Overlay): Set<string> {
  return new Set([...overlay.heads.keys(), ...overlay.entries.keys(), ...overlay.deleted])
}

/**
 * Whether the storage can check from memory the held heads of `touched` (`StorageReader.knows`):
 * one it cannot always fails its check, so the batch reads them instead of running in vain.
 * Heads a batch in flight wrote (`base`) are its own, checked once it committed.
 */
function knowsHeads(
  reader: StorageReader,
  touched: ReadonlySet<string>,
  base: Overlay | undefined,
  state: Overlay['state'],
): boolean {
  if (!reader.knows || base) return true
  for (const id of touched) {
    const head = state.sessions.get(id)?.head
    if (head && !reader.knows(head)) return false
  }
  return true
}

/** Whether a head read from disk is the one held (by `v`, leaf and meta: see `refresh`). */
function sameHead(held: SessionHead | undefined, disk: SessionHead | undefined): boolean {
  if (!held || !disk) return held === disk
  return held.v === disk.v && (held === disk || (held.leaf === disk.leaf && jsonEqual(held.meta, disk.meta)))
}

function toPayload(overlay: Overlay): ChangePayload {
  return {
    deleted: [...overlay.deleted],
    heads: [...overlay.heads.values()],
    entries: [...overlay.entries].map(([id, m]) => [id, [...m.values()]] as const),
  }
}

/**
 * A session as it will be once the writes in flight commit: the head and entries read through
 * `overlay` (entries must be loaded). Children are not overlaid: only `messages$` reads this.
 */
function pendingView(
  overlay: Overlay | undefined,
  s: SessionState | undefined,
  session_id: string,
): SessionState | undefined {
  if (!overlay || !s?.entries) return s
  if (!overlay.heads.has(session_id) && !overlay.entries.has(session_id) && !overlay.base) return s
  const head = overlay.head(session_id)
  if (!head) return undefined
  const entry = (entry_id: string): SessionEntry | undefined => overlay.entry(session_id, entry_id)
  return {
    head,
    entries: { get: entry, has: (entry_id: string) => entry(entry_id) !== undefined } as Map<
      string,
      SessionEntry
    >,
    children: s.children,
  }
}
