import { openDB, unwrap, type IDBPDatabase } from 'idb'
import { SessionError } from '../../model/errors.js'
import { once } from '../../util/once.js'
import { fromStored, type StoredBytes } from './stored-bytes.js'
import type { SessionHead, Storage } from '../seam.js'
import type { StorageShared, StorageWriter } from './idb-writer.js'
import {
  BLOBS,
  ENTRIES,
  SESSIONS,
  STAMPS,
  entriesOf,
  isClosed,
  request,
  sessionRange,
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
// fails to write rather than write unseen. Opening an older database upgrades it in place and
// keeps every record.
const VERSION = 4

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
      upgrade(db, _old, _new, transaction) {
        // A new or older database: without the upgrade's code, the upgrade is called off (nothing
        // changes) and the database opened again once the code is here.
        if (upgradeCode.value) upgradeCode.value.upgrade(db, transaction)
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

  /** A session's head: its record, with the volatile part of a newer stamp on an entry. */
  const derive = (rec: SessionHead | undefined, newest: Stamped | undefined): SessionHead | undefined => {
    const h = newest?.h
    if (!rec || !h) return rec
    const head: SessionHead =
      h.l !== undefined && h.v > rec.v
        ? { ...rec, meta: { ...rec.meta, updated_at: h.u!, message_count: h.n! }, leaf: h.l, v: h.v }
        : rec
    incarnations.set(head, h.i)
    return head
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
    derive,
    newestStamp,
    dropConnection: () => {
      connection = undefined
    },
  }

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
      // Not a source of trust: a storage opens before it first writes, so before it holds the
      // lock (the heads a commit reads inside its transaction are, see `reader.head`).
      return readonly([SESSIONS, ENTRIES], async (tx) => {
        const records = await request(tx.objectStore(SESSIONS).getAll() as IDBRequest<SessionHead[]>)
        return Promise.all(
          records.map(async (rec) => derive(rec, await request(newestStamp(tx, rec.meta.session_id)))!),
        )
      })
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
