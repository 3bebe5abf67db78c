import { openDB, unwrap, type IDBPDatabase } from 'idb'
import { SessionError } from '../../model/errors.js'
import { once } from '../../util/once.js'
import { fromStored, type StoredBytes } from './stored-bytes.js'
import type { PageQuery, SessionHead, Storage } from '../seam.js'
import type { StorageShared, StorageWriter } from './idb-writer.js'
import {
  BLOBS,
  BY_CREATED,
  BY_UPDATED,
  ENTRIES,
  ORDER,
  SESSIONS,
  STAMPS,
  entriesOf,
  headOf,
  isClosed,
  request,
  sessionRange,
  type Order,
  type Stamped,
} from './layout.js'

export interface IndexedDbStorageOptions {
  /** Database name; default `"colloquy"`. Stores on the same name share data across tabs. */
  name?: string
  /** `relaxed` (default) lets the browser acknowledge a commit before flushing to disk. */
  durability?: 'relaxed' | 'strict' | 'default'
}

// Version 2 added the attachment byte store. Version 3 made appends append-only: an append writes
// its entry and nothing else (see `Stamp`). Version 4 changes no record: it is the version from
// which every writer holds the database's writer lock (`writer-lock.ts`). Code of version 3
// writes without it, which would fool the trust of a tab holding it; opening at 4 sends such a
// tab `versionchange` (it closes) and it can no longer open the database (VersionError), so it
// fails to write rather than write unseen. Version 5 adds the order records and their indexes
// (`Order` in `layout.ts`): a store opens without reading every head. Version 6 grows each order
// record by the head's leaf, message count, `v` and incarnation, written with every head: a
// head is read from two records by key, without the stamp index. Opening an older database
// upgrades it in place and keeps every record.
const VERSION = 6

/**
 * The write half (`idb-writer.ts`): fetched with the engine's batch code (`prepare`), or by the
 * first `transact` of a storage used on its own. Exported for tests that check when it is here.
 */
export const writerCode = once(() => import('./idb-writer.js'))
/** Store creation and schema upgrades (`idb-upgrade.ts`): fetched by the first open that needs one. */
const upgradeCode = once(() => import('./idb-upgrade.js'))

/**
 * IndexedDB storage. Every browser quirk lives here: connections closed by the browser or by
 * another tab's upgrade are reopened once, `versionchange` closes this connection instead of
 * blocking the other tab, and a failed request aborts the whole transaction.
 */
export function indexedDbStorage(options: IndexedDbStorageOptions = {}): Storage {
  const name = options.name ?? 'colloquy'
  const durability = options.durability ?? 'relaxed'
  let connection: Promise<IDBDatabase> | undefined
  /**
   * The incarnation of every head this storage read or wrote. The engine holds these very
   * objects, so a commit built on one is checked with one read of the stamp; a head it got elsewhere
   * (another tab's relay) is checked by reading the whole head once.
   */
  const incarnations = new WeakMap<SessionHead, string>()
  /** The write half, made on the first write (`idb-writer.ts`: commits, trust, the writer lock). */
  let writer: StorageWriter | undefined
  const distrust = (): void => writer?.distrust()

  const connect = (): Promise<IDBDatabase> => {
    // Looked up at open, never at import: server rendering and Node import this module too.
    if (typeof indexedDB === 'undefined')
      return Promise.reject(new SessionError('session/storage', 'IndexedDB is not available here'))
    return openDB(name, VERSION, {
      upgrade(db, old, _new, transaction) {
        // A new or older database: without the upgrade's code, the upgrade is called off (nothing
        // changes) and the database opened again once the code is here.
        if (upgradeCode.value) upgradeCode.value.upgrade(db, old, transaction)
        else {
          transaction.done.catch(() => {})
          transaction.abort()
        }
      },
      blocking(_current, next) {
        // Another tab wants a newer schema (or deletes the database): step aside now, reopen
        // on the next commit. An upgrade may rewrite records: nothing verified before holds.
        // A deletion (no next version: the browser evicting the site's data, a user or the app
        // clearing it) ends this storage: a write now would create an empty database holding
        // only what this store writes next (a sync checkpoint past changes it no longer has).
        // Opened again, a store starts clean there, and sync pulls everything back.
        if (next === null) deleted = true
        distrust()
        void connection?.then((db) => db.close())
        connection = undefined
      },
      terminated() {
        distrust()
        connection = undefined
      },
    }).then(
      (db: IDBPDatabase) => unwrap(db) as IDBDatabase,
      // Called off for want of the upgrade's code (or failed otherwise: then it fails again).
      (e: unknown) => (upgradeCode.value ? Promise.reject(e) : upgradeCode.load()!.then(connect)),
    )
  }
  let deleted = false
  // Its error comes with the write half: a deletion is rare, and no app shows a transcript by it.
  const gone = (m: typeof import('./idb-writer.js')): Promise<never> => Promise.reject(m.deletedError(name))
  const db = (): Promise<IDBDatabase> =>
    deleted
      ? (writerCode.load()?.then(gone) ?? gone(writerCode.value!))
      : (connection ??= connect().catch((e) => {
          connection = undefined
          throw e
        }))

  const readonly = async <T>(stores: string[], fn: (tx: IDBTransaction) => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn((await db()).transaction(stores, 'readonly'))
      } catch (e) {
        if (attempt > 0 || !isClosed(e)) throw e
        connection = undefined
      }
    }
  }

  /**
   * Reads a session's head inside `tx` without waiting: its record and its order record (see
   * `Order`), two `get`s by key sent at once (only the record where the order record was read
   * already, as a page walks them); `then` gets the head (`headOf`). The one way heads are read:
   * a page, a first use, a commit reading the disk.
   */
  const readHead = (
    tx: IDBTransaction,
    id: string,
    then: (head: SessionHead | undefined) => void,
    known?: Order,
  ): void => {
    let left = known ? 1 : 2
    let rec: SessionHead | undefined
    let order = known
    const r = tx.objectStore(SESSIONS).get(id) as IDBRequest<SessionHead | undefined>
    r.onsuccess = () => {
      rec = r.result
      if (--left === 0) then(headOf(rec, order, incarnations))
    }
    if (known) return
    const o = tx.objectStore(ORDER).get(id) as IDBRequest<Order | undefined>
    o.onsuccess = () => {
      order = o.result
      if (--left === 0) then(headOf(rec, order, incarnations))
    }
  }
  /** The key range of the session stamps were last looked up in: serial appends reuse it. */
  let stamped: { readonly id: string; readonly range: IDBKeyRange } | undefined
  /** The record holding a session's newest stamp (a `get` on the index: cheaper than a cursor). */
  const newestStamp = (tx: IDBTransaction, id: string): IDBRequest<Stamped | undefined> => {
    if (stamped?.id !== id) stamped = { id, range: sessionRange(id) }
    return tx.objectStore(ENTRIES).index(STAMPS).get(stamped.range) as IDBRequest<Stamped | undefined>
  }
  const shared: StorageShared = {
    name,
    durability,
    db,
    incarnations,
    readHead,
    newestStamp,
    dropConnection: () => {
      connection = undefined
    },
  }

  /**
   * The heads of the sessions named (by id, or by the order record read in `tx`) read in `tx`
   * (`readHead`: every request sent at once, no promise per request). A request that fails
   * aborts the transaction, which rejects this.
   */
  const headsIn = (
    tx: IDBTransaction,
    ids: ReadonlyArray<string | Order>,
  ): Promise<Array<SessionHead | undefined>> =>
    new Promise((resolve, reject) => {
      const out = new Array<SessionHead | undefined>(ids.length)
      let left = ids.length
      if (left === 0) return resolve(out)
      tx.addEventListener('abort', () =>
        reject(tx.error ?? new DOMException('transaction aborted', 'AbortError')),
      )
      ids.forEach((x, i) => {
        const done = (head: SessionHead | undefined): void => {
          out[i] = head
          if (--left === 0) resolve(out)
        }
        if (typeof x === 'string') readHead(tx, x, done)
        else readHead(tx, x.s, done, x)
      })
    })

  /**
   * Up to `n` order records from `range` in direction `dir`: one `getAll` where the browser takes
   * a direction (Chromium 141+, as `entriesOf` does), else a cursor (a step per record).
   */
  const walk = (index: IDBIndex, range: IDBKeyRange | undefined, dir: IDBCursorDirection, n: number) =>
    'getAllRecords' in index
      ? request(
          (index.getAll as unknown as (o: object) => IDBRequest<Order[]>).call(index, {
            query: range ?? null,
            count: n,
            direction: dir,
          }),
        )
      : cursorWalk(index, range, dir, n)
  const cursorWalk = (index: IDBIndex, range: IDBKeyRange | undefined, dir: IDBCursorDirection, n: number) =>
    new Promise<Order[]>((resolve, reject) => {
      const out: Order[] = []
      const r = index.openCursor(range, dir)
      r.onsuccess = () => {
        const c = r.result
        if (!c) return resolve(out)
        out.push(c.value as Order)
        if (out.length >= n) resolve(out)
        else c.continue()
      }
      r.onerror = () => reject(r.error)
    })

  /**
   * A page of heads in a list order, from the order records' indexes (see `Order`): records are
   * walked in rounds from the keyset position, those whose status or kind do not pass are
   * skipped without reading their heads, and the heads of the others are read together.
   */
  const page = (q: PageQuery): Promise<SessionHead[]> =>
    readonly([SESSIONS, ORDER], async (tx) => {
      const byUpdated = q.order === 'updated_desc'
      const index = tx.objectStore(ORDER).index(byUpdated ? BY_UPDATED : BY_CREATED)
      const dir: IDBCursorDirection = q.order === 'created_asc' ? 'next' : 'prev'
      const filtered = q.status != null || q.kinds != null || q.accept !== undefined
      let from = q.after && [q.after.k, q.after.id]
      const out: SessionHead[] = []
      while (out.length < q.limit) {
        // A filtered page reads ahead in larger rounds: fewer round trips when few pass.
        const want = Math.min(q.limit - out.length, 1000) + (filtered ? 32 : 0)
        const range =
          from && (dir === 'next' ? IDBKeyRange.lowerBound(from, true) : IDBKeyRange.upperBound(from, true))
        const records = await walk(index, range, dir, want)
        if (!records.length) break
        const last = records.at(-1)!
        from = [byUpdated ? last.u : last.c, last.s]
        // The order records just read hold the volatile part: each head is its record beside them.
        const passing = records.filter(
          (r) =>
            (q.status == null || r.t === q.status) && (q.kinds == null || q.kinds.includes(r.k as never)),
        )
        const heads = await headsIn(tx, passing)
        for (const h of heads) {
          if (out.length >= q.limit) break
          if (h && (!q.accept || q.accept(h.meta))) out.push(h)
        }
        if (records.length < want) break
      }
      return out
    })

  let closed = false
  const write = (
    m: typeof import('./idb-writer.js'),
    work: Parameters<Storage['transact']>[0],
  ): Promise<void> => {
    const w = (writer ??= m.storageWriter(shared))
    const committed = w.transact(work)
    // Closed while the write half was fetched: its lock goes once this commit finishes, as on `close`.
    if (closed) w.close()
    return committed
  }

  return {
    name: `indexeddb:${name}`,
    ordered: true,
    prepare: writerCode.load,
    async open() {
      // Reads no head: the engine reads heads on first use and lists through `paged` (issue 28).
      // The connection (and an upgrade, where one is due) is made here, so opening still fails
      // loudly where the database cannot be opened.
      await db()
      return []
    },
    paged: {
      head: (id) => readonly([SESSIONS, ORDER], (tx) => headsIn(tx, [id]).then(([head]) => head)),
      page,
    },
    entries(id, count, first) {
      return readonly([ENTRIES], (tx) => entriesOf(tx, id, count, first))
    },
    attachmentBytes(session_id, attachment_id) {
      // A Blob, or its bytes and type where the engine refuses Blobs (`idb-blobs.ts`).
      return readonly([BLOBS], (tx) =>
        request(
          tx.objectStore(BLOBS).get([session_id, attachment_id]) as IDBRequest<StoredBytes | undefined>,
        ).then(fromStored),
      )
    },
    transact(work) {
      // The engine fetched the write half with its batch code: no await on the hot path.
      const m = writerCode.value
      return m ? write(m, work) : writerCode.load()!.then((code) => write(code, work))
    },
    sideRecords(store) {
      // Sync's outbox and checkpoints, never needed to show a transcript: with the write half.
      const read = (m: typeof import('./idb-writer.js')) => m.sideRecords(readonly, store)
      return writerCode.value ? read(writerCode.value) : writerCode.load()!.then(read)
    },
    close() {
      // The lock goes once the commits admitted finish; the connection closes once they do too.
      closed = true
      writer?.close()
      void connection?.then(
        (d) => d.close(),
        () => {},
      )
      connection = undefined
    },
  }
}
