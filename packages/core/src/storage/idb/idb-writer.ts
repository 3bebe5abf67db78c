import {
  ALL,
  BLOBS,
  ENTRIES,
  MARK,
  ORDER,
  SESSIONS,
  entriesOf,
  orderOf,
  isClosed,
  request,
  sessionRange,
  type Stamp,
  type Stamped,
} from './layout.js'
import { StaleHeadError } from '../seam.js'
import { SessionError } from '../../model/errors.js'
import { freshIncarnation } from './incarnation.js'
import type { SessionEntry } from '../../model/model.js'
import type { SessionHead, Storage, StorageReader, WriteSet } from '../seam.js'
import { writerLock } from './writer-lock.js'
import { blobsReady, toStored } from './idb-blobs.js'

// The write half of `indexedDbStorage` (`idb-storage.ts`): commit planning, read-write
// transactions, stamp checks, trust and the writer lock. Fetched with the engine's batch code
// on the first write (or by the store's prefetch): opening, heads and entry reads, all a page
// needs to show a transcript, stay in `idb-storage.ts`. A context that never writes never takes
// the writer lock.
const done = (tx: IDBTransaction): Promise<void> =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve()
    // A failed request's error reaches the transaction before the abort sets `tx.error` (Gecko
    // reports a full quota this way): the request's error is the reason.
    tx.onerror = (e) =>
      reject(
        (e.target as IDBRequest | null)?.error ??
          tx.error ??
          new DOMException('transaction aborted', 'AbortError'),
      )
    tx.onabort = () => reject(tx.error ?? new DOMException('transaction aborted', 'AbortError'))
  })
const abort = (tx: IDBTransaction): void => {
  try {
    tx.abort()
  } catch {
    // already finished
  }
}
/** Whether `next` differs from `held` only in what a stamp carries: leaf, count, updated_at, v. */
const onlyVolatile = (held: SessionHead, next: SessionHead): boolean => {
  if (held.attachments !== next.attachments) return false
  const a = held.meta as unknown as Record<string, unknown>
  const b = next.meta as unknown as Record<string, unknown>
  let n = 0
  for (const k in b) {
    n++
    if (k !== 'updated_at' && k !== 'message_count' && a[k] !== b[k]) return false
  }
  for (const _ in a) n--
  return n === 0
}

/** What one commit writes for one session (see `Stamp`). */
interface SessionWrite {
  readonly id: string
  readonly head: SessionHead | undefined
  readonly batch: ReadonlyMap<string, SessionEntry> | undefined
  /** Rewrite the head record and stamp the marker; else stamp `carrier` (if any). */
  readonly mark: boolean
  readonly carrier?: string
  readonly stamp?: Omit<Stamp, 'i'>
  /** Known now, or read from the newest stamp inside the transaction. */
  readonly incarnation?: string
}

/** The records of side store `store` (a storage's `sideRecords`), read through the storage's `readonly`. */
export function sideRecords(
  readonly: <T>(stores: string[], fn: (tx: IDBTransaction) => Promise<T>) => Promise<T>,
  store: string,
): Promise<Array<{ key: string | number; value: unknown }>> {
  return readonly([store], async (tx) => {
    const s = tx.objectStore(store)
    const [keys, values] = await Promise.all([request(s.getAllKeys()), request(s.getAll())])
    return keys.map((key, i) => ({ key: key as string | number, value: values[i] }))
  })
}

/** What every call gets once the database was deleted under the storage (see `blocking` in `idb-storage.ts`). */
export const deletedError = (name: string): SessionError =>
  new SessionError(
    'session/storage',
    `the database "${name}" was deleted while open (the browser evicted this site's data, or it was cleared): open the store again to start clean`,
  )

/** What the write half takes from the storage it belongs to. */
export interface StorageShared {
  readonly name: string
  readonly durability: IDBTransactionDurability
  db(): Promise<IDBDatabase>
  /** Forgets the connection: the next `db()` opens a new one. */
  dropConnection(): void
  readonly incarnations: WeakMap<SessionHead, string>
  /** Reads a session's head inside `tx` without waiting (its record and its order record). */
  readHead(tx: IDBTransaction, id: string, then: (head: SessionHead | undefined) => void): void
  newestStamp(tx: IDBTransaction, id: string): IDBRequest<Stamped | undefined>
}

/** What the storage calls: its `transact`; `distrust` when the connection goes; `close`. */
export interface StorageWriter {
  transact: Storage['transact']
  distrust(): void
  close(): void
}

/** The write half of one `indexedDbStorage`, made on its first write. */
export function storageWriter(shared: StorageShared): StorageWriter {
  const { name, durability, db, dropConnection, incarnations, readHead, newestStamp } = shared
  /**
   * Trust: per session, the head this storage verified on disk (undefined: verified absent)
   * while holding the writer lock, without a break since. No other context writes while it is
   * held, and this storage's own commits update it, so a commit built on exactly that head (the
   * same object) needs no read of the stamp. Filled only by a commit that checked the session
   * inside its transaction (or read its head there: a load from disk) and completed; emptied
   * whenever the lock is let go (before another commit is admitted), when the connection is
   * closed or another tab upgrades or deletes the database. A session written without such a
   * check loses its trust.
   */
  const known = new Map<string, SessionHead | undefined>()
  /** Bumped whenever trust is cleared: a read or commit begun before may not add to it. */
  let epoch = 0
  /**
   * Heads written during the hold numbered by `epoch` by a commit that checks their session (so
   * it makes them `known` if it completes): a batch built on one (the engine's pipeline builds
   * the next batch on the draft of the one committing) is checked against `known` only when its
   * transaction runs, after that commit completed and `trust` ran (IndexedDB fires a
   * transaction's `complete`, and the microtasks after it, before the next one's requests answer).
   */
  const promised = new WeakMap<SessionHead, number>()
  /**
   * Read-write transactions of this storage created and not yet settled (for one that completed:
   * until `trust` ran). While it is 1 (the commit's own), nothing ordered before a commit can
   * still change the disk or `known` (see `early` in `commit`).
   */
  let active = 0
  const distrust = (): void => {
    known.clear()
    epoch++
  }
  const lock = writerLock(name, distrust)

  /** How a commit writes each session it touches, given the heads it was built on (`bases`). */
  const plan = (writes: WriteSet, bases: ReadonlyMap<string, SessionHead | undefined>): SessionWrite[] => {
    const out: SessionWrite[] = []
    const ids = new Set([...writes.heads.keys(), ...writes.entries.keys()])
    for (const id of ids) {
      const head = writes.heads.get(id)
      const batch = writes.entries.get(id)
      const base = bases.get(id)
      // A session absent before this commit (created, re-created, forked into) starts a new incarnation.
      const fresh = writes.deleted.has(id) || (bases.has(id) && base === undefined)
      const incarnation = fresh ? freshIncarnation() : base && incarnations.get(base)
      let last: string | undefined
      if (batch) for (const eid of batch.keys()) last = eid
      if (head) {
        if (!fresh && base && last !== undefined && onlyVolatile(base, head)) {
          // An append (or an update): the entry carries the new volatile state, the head record stays.
          const carrier = batch!.has(head.leaf as string) ? head.leaf! : last
          out.push({
            id,
            head,
            batch,
            mark: false,
            carrier,
            incarnation,
            stamp: {
              s: id,
              v: head.v,
              o: -head.v,
              l: head.leaf,
              n: head.meta.message_count,
              u: head.meta.updated_at,
            },
          })
        } else out.push({ id, head, batch, mark: true, incarnation })
      } else if (batch && base && !fresh) {
        // Entries without a head change (a pulled update): whichever record held the newest stamp
        // may be among them, so the last of them carries it again, unchanged.
        out.push({
          id,
          head,
          batch,
          mark: false,
          carrier: last,
          incarnation,
          stamp: {
            s: id,
            v: base.v,
            o: -base.v,
            l: base.leaf,
            n: base.meta.message_count,
            u: base.meta.updated_at,
          },
        })
      } else {
        // Entries of a session not visible yet (an import's chunks): nothing stamped to keep.
        out.push({ id, head, batch, mark: false, incarnation: '' })
      }
    }
    return out
  }

  /**
   * After a commit completed under the lock: a session it checked (or read) on disk holds what
   * the commit wrote, or what was found when it wrote nothing of it; a session it deleted holds
   * nothing or what it re-created. Any other session it wrote is no longer known (its newest
   * stamp may not be the one this commit wrote).
   */
  const trust = (writes: WriteSet, verified: ReadonlyMap<string, SessionHead | undefined>): void => {
    // A head without a known incarnation could not be written on without a read anyway.
    const keep = (id: string, head: SessionHead | undefined): void => {
      if (head === undefined || incarnations.has(head)) known.set(id, head)
      else known.delete(id)
    }
    for (const [id, head] of verified)
      keep(id, writes.heads.has(id) || writes.deleted.has(id) ? writes.heads.get(id) : head)
    for (const id of writes.deleted) if (!verified.has(id)) keep(id, writes.heads.get(id))
    for (const id of writes.heads.keys()) if (!verified.has(id) && !writes.deleted.has(id)) known.delete(id)
    for (const id of writes.entries.keys()) if (!verified.has(id) && !writes.deleted.has(id)) known.delete(id)
  }

  /** One read-write transaction (admitted under the writer lock, where there is one). */
  const commit = async (work: Parameters<Storage['transact']>[0]): Promise<void> => {
    let rebuilt = false
    for (let attempt = 0; ; attempt++) {
      // Admitted under the lock (`transact`), which is not let go before this commit settles:
      // trust read now stays valid through it, unless cleared (`epoch`).
      const trusting = lock?.held === true
      const since = epoch
      // Sessions this commit checked against disk (or read there), with the head found there.
      const verified = new Map<string, SessionHead | undefined>()
      let database: IDBDatabase
      let tx: IDBTransaction | undefined
      // Heads to check before the commit: read ahead of the writes, never waited for.
      const checks: Array<{
        id: string
        ok: (disk: SessionHead | undefined) => boolean
        held?: { readonly head: SessionHead | undefined }
      }> = []
      // The head each session was built on, where known (undefined: absent).
      const bases = new Map<string, SessionHead | undefined>()
      // A batch that reads waits for its reads, so it takes every store; one that only checks
      // heads is known whole before the transaction opens and takes only the stores it writes.
      const open = (scope: string[]): IDBTransaction => {
        if (tx) return tx
        tx = database.transaction(scope, 'readwrite', { durability })
        active++
        return tx
      }
      let writes: Awaited<ReturnType<typeof work>>
      let sessions: SessionWrite[]
      // The last request issued: the writes' success, or a deferred check, waits for it.
      let last: IDBRequest | undefined
      // Entries written while the batch was built (`stream`), and what stopped that.
      let streamed: Set<SessionEntry> | undefined
      let broken: { error: unknown } | undefined
      try {
        database = await db()
        const reader: StorageReader = {
          head: (id) =>
            new Promise((resolve) =>
              readHead(open(ALL), id, (head) => {
                bases.set(id, head)
                verified.set(id, head)
                resolve(head)
              }),
            ),
          entries: (id) => entriesOf(open(ALL), id),
          expect: (id, ok, held) => {
            checks.push({ id, ok, held })
            if (held) bases.set(id, held.head)
          },
          // Only where the transaction will hold entries alone and commit early: this storage
          // has no other read-write transaction in flight, and every check is on a head verified
          // during this hold (decided without a read, see `early` below).
          stream: () => {
            if (tx || !trusting || active !== 0 || since !== epoch || !checks.length) return undefined
            for (const c of checks) {
              const h = c.held?.head
              if (!h || !known.has(c.id) || known.get(c.id) !== h || !incarnations.has(h)) return undefined
            }
            const store = open([ENTRIES, ORDER]).objectStore(ENTRIES)
            const done = (streamed = new Set())
            return (session_id, entry) => {
              if (broken) return
              try {
                last = store.put(entry, [session_id, entry.id])
                done.add(entry)
              } catch (error) {
                // The transaction ended under us: reported once the batch is built.
                broken = { error }
              }
            }
          },
        }
        writes = await work(reader)
        // A streamed write failed at once (the transaction ended under us): the batch runs again
        // the usual way, and reports what fails then.
        if (broken) throw new StaleHeadError('')
        // Blobs this database may refuse (`idb-blobs.ts`): asked, and their bytes read, before
        // the transaction writes them. A transaction already open would end while that is
        // awaited: it is taken back and the batch built again, its Blobs ready by then.
        const blobs = blobsReady(name, database, BLOBS, writes)
        if (blobs) {
          if (tx && !rebuilt) {
            rebuilt = true
            abort(tx)
            active--
            await blobs
            attempt--
            continue
          }
          await blobs
        }
        sessions = plan(writes, bases)
        // The stores written: an append touches `entries` alone.
        const scope = new Set([ENTRIES])
        if (writes.deleted.size || sessions.some((s) => s.mark)) scope.add(SESSIONS)
        // Every head written writes its order record (see `Order`).
        if (writes.deleted.size || sessions.some((s) => s.head)) scope.add(ORDER)
        // A check that reads the head reads its record and its order record.
        for (const c of checks)
          if (!c.held || (c.held.head && !incarnations.has(c.held.head))) scope.add(SESSIONS).add(ORDER)
        if (writes.blobs?.length || writes.deleted.size) scope.add(BLOBS)
        for (const s of writes.side) scope.add(s.store)
        // A streamed batch's transaction was opened for entries alone: if its writes need more,
        // nothing it wrote counts (the transaction is aborted) and the batch runs again reading
        // the disk, which never streams.
        if (streamed && [...scope].some((s) => s !== ENTRIES && s !== ORDER)) throw new StaleHeadError('')
        open([...scope])
      } catch (e) {
        if (tx) {
          abort(tx)
          active--
        }
        if (attempt > 0 || !isClosed(e)) throw e
        distrust()
        dropConnection()
        continue
      }
      const t = tx!
      const finished = done(t)
      finished.catch(() => {})
      let stale: string | undefined
      const fail = (id: string): void => {
        if (stale !== undefined) return
        stale = id
        abort(t)
      }
      // Checks of trusted sessions: no read, `ok` runs when the last request issued succeeds
      // (as a read's answer would: after the transactions before this one committed).
      const deferred: Array<() => void> = []
      // Whether nothing can need to abort this transaction once its last request is issued, so
      // it may call `commit()` then instead of waiting for auto-commit (one round trip to the
      // IndexedDB backend less: the last success event need not come back to the page first).
      // A trusted check's outcome is final at issue time when this storage has no other
      // read-write transaction in flight (`active` counts only this one):
      // - the disk: the lock is held and is not let go before this commit settles, so no other
      //   context writes; no transaction of this storage is ordered before this one (one
      //   created after it runs after it). The disk now holds `known`, as it will when this
      //   transaction runs.
      // - `known`: only `trust` (after a commit of this storage completed: none is left to
      //   complete before this one) and `distrust` change it. `distrust` while this one runs
      //   comes from another tab's upgrade or delete (`blocking`), which waits for this
      //   connection to close, so for its transactions to finish: the disk seen here still
      //   holds when this one runs (and `epoch` keeps the commit from adding to trust), or from
      //   a connection the browser ended, which aborts this transaction anyway.
      // - `ok`: the engine's check is `sameHead(held, disk)` (pure) and, for a batch built on
      //   another's draft, that the other committed that draft: once true it stays true. A
      //   false answer may still turn true (the batch before completed, its continuation not
      //   yet run), so such a check takes today's deferred path.
      // So each check that passes now passes then too. Anything that reads inside the
      // transaction (a check not trusted, a stamp read for an unknown incarnation, a blob copy)
      // keeps auto-commit. A request that fails after `commit()` still aborts the transaction,
      // and `finished` reports it as before.
      let early = trusting && active === 1 && checks.length > 0 && !writes.blobs?.some((b) => b.op === 'copy')
      try {
        const entries = t.objectStore(ENTRIES)
        for (const c of checks) {
          // Requests run in order: these answers arrive before the writes below can commit,
          // and aborting there takes them all back.
          const held = c.held
          if (
            trusting &&
            held &&
            ((known.has(c.id) && known.get(c.id) === held.head) ||
              (held.head && promised.get(held.head) === since))
          ) {
            // Built on the very head verified on disk during this hold (trust implies its
            // incarnation is known): the disk still holds it, no other context wrote since. Or
            // on the head a commit of this hold still in flight writes: IndexedDB runs this
            // transaction after that one, whose completion (and `trust`) comes first, so by
            // the time the check runs `known` says whether it landed, checked.
            verified.set(c.id, held.head)
            if (early && known.has(c.id) && known.get(c.id) === held.head && c.ok(held.head)) continue
            deferred.push(() => {
              if (
                stale === undefined &&
                !(known.has(c.id) && known.get(c.id) === held.head && c.ok(held.head))
              )
                fail(c.id)
            })
          } else if (held && (held.head === undefined || incarnations.has(held.head))) {
            early = false
            // One read: the newest stamp must be the one the batch was built on.
            const r = newestStamp(t, c.id)
            r.onsuccess = () => {
              const stamp = r.result?.h
              const h = held.head
              const same =
                h === undefined
                  ? stamp === undefined
                  : stamp !== undefined && stamp.v === h.v && stamp.i === incarnations.get(h)
              if (stale === undefined && !(same && c.ok(h))) return fail(c.id)
              verified.set(c.id, h)
            }
          } else {
            early = false
            readHead(t, c.id, (disk) => {
              if (stale === undefined && !c.ok(disk)) return fail(c.id)
              // The head held matches the disk: its incarnation is the disk's from now on.
              const inc = disk && incarnations.get(disk)
              if (held?.head && inc) incarnations.set(held.head, inc)
              verified.set(c.id, held ? held.head : disk)
            })
          }
        }
        const checked = new Set(checks.map((c) => c.id))
        const blobs = writes.blobs?.length || writes.deleted.size ? t.objectStore(BLOBS) : undefined
        // A fork's copies read their source first: a session deleted in the same batch still lends its bytes.
        // Without copies the writes go out now, not a microtask later.
        const copies = writes.blobs?.some((b) => b.op === 'copy')
          ? await Promise.all(
              writes.blobs.flatMap((b) =>
                b.op === 'copy'
                  ? [
                      request(
                        blobs!.get([b.from_session_id, b.attachment_id]) as IDBRequest<Blob | undefined>,
                      ).then((bytes) => ({ b, bytes })),
                    ]
                  : [],
              ),
            )
          : []
        for (const id of writes.deleted) {
          t.objectStore(SESSIONS).delete(id)
          t.objectStore(ORDER).delete(id)
          entries.delete(sessionRange(id))
          last = blobs!.delete(sessionRange(id))
        }
        for (const b of writes.blobs ?? []) {
          if (b.op === 'put') last = blobs!.put(toStored(name, b.bytes), [b.session_id, b.attachment_id])
          else if (b.op === 'delete') last = blobs!.delete([b.session_id, b.attachment_id])
        }
        for (const { b, bytes } of copies)
          if (bytes) last = blobs!.put(bytes, [b.session_id, b.attachment_id])
        const put = (w: SessionWrite, incarnation: string): void => {
          if (w.head && incarnation) incarnations.set(w.head, incarnation)
          if (w.head && trusting && (checked.has(w.id) || writes.deleted.has(w.id)))
            promised.set(w.head, since)
          // The order record with every head written, the stamp's leaf, count, `v` and incarnation
          // included: what a head is read from (`headOf`).
          if (w.head) last = t.objectStore(ORDER).put(orderOf(w.head, incarnation), w.id)
          if (w.mark) {
            t.objectStore(SESSIONS).put(w.head, w.id)
            last = entries.put(
              { h: { s: w.id, v: w.head!.v, o: -w.head!.v, i: incarnation } satisfies Stamp },
              [w.id, MARK],
            )
          }
          if (w.batch) {
            for (const [eid, e] of w.batch) {
              if (eid === w.carrier)
                last = entries.put({ ...e, h: { ...w.stamp!, i: incarnation } satisfies Stamp }, [w.id, eid])
              else if (!streamed?.has(e)) last = entries.put(e, [w.id, eid])
            }
          }
        }
        for (const w of sessions) {
          if (w.incarnation !== undefined) {
            put(w, w.incarnation)
            continue
          }
          // Built on a head whose incarnation this storage has not seen (relayed by another
          // tab): the newest stamp on disk has it. Read before this session's writes, which
          // go out once it is known (a failed check has aborted everything by then).
          early = false
          const r = (last = newestStamp(t, w.id))
          r.onsuccess = () => {
            if (stale !== undefined) return
            const stamp = r.result?.h
            try {
              put(w, stamp ? stamp.i : freshIncarnation())
            } catch (e) {
              // The transaction ended under us: `finished` reports it.
              abort(t)
              void e
            }
          }
        }
        for (const s of writes.side) {
          if (s.value === undefined) last = t.objectStore(s.store).delete(s.key!)
          else if (s.key === undefined) last = t.objectStore(s.store).put(s.value)
          else last = t.objectStore(s.store).put(s.value, s.key)
        }
        if (deferred.length) {
          const run = (): void => {
            for (const check of deferred) check()
          }
          // A commit writing nothing has no request to wait for: one read stands in.
          if (last) last.addEventListener('success', run)
          else newestStamp(t, checks[0].id).onsuccess = run
        } else if (early && typeof t.commit === 'function') t.commit()
      } catch (e) {
        abort(t)
        active--
        if (stale !== undefined) throw new StaleHeadError(stale)
        throw e
      }
      try {
        await finished
        if (trusting && since === epoch) trust(writes, verified)
        return
      } catch (e) {
        if (stale !== undefined) throw new StaleHeadError(stale)
        // A connection the browser closed under us aborts the transaction: reopen once.
        if (
          attempt > 0 ||
          !(e instanceof DOMException) ||
          (e.name !== 'InvalidStateError' && e.name !== 'UnknownError')
        )
          throw e
        dropConnection()
      } finally {
        active--
      }
    }
  }

  return {
    transact(work) {
      if (!lock) return commit(work)
      // Held: admitted at once, no await (the hot path). Else queued behind the holder's handover.
      const entered = lock.enter()
      const committed =
        entered === true
          ? commit(work)
          : entered.then(() => {
              lock.resumed()
              return commit(work)
            })
      // Trust was updated before `committed` settled; only then may the lock be let go.
      committed.then(lock.leave, lock.leave)
      return committed
    },
    distrust,
    close() {
      lock?.close()
    },
  }
}
