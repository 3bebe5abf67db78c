import { openDB, unwrap, type IDBPDatabase } from 'idb'
import { SessionError } from './errors.js'
import type { SessionEntry } from './model.js'
import { engineWrites } from './engine.js'
import { once } from './once.js'
import { fromStored, type StoredBytes } from './idb-blobs.js'
import type { SessionHead, Storage } from './storage.js'
import type { StorageShared, StorageWriter } from './idb-writer.js'

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
export const SESSIONS = 'sessions'
export const ENTRIES = 'entries'
/** Attachment bytes as Blobs keyed [session_id, attachment_id]: never read with a session. */
export const BLOBS = 'attachments'
/** Stores beside the session data, written in the same transactions (sync outbox, checkpoints). */
export const SIDE_STORES = ['outbox', 'kv'] as const
export const ALL = [SESSIONS, ENTRIES, BLOBS, ...SIDE_STORES]
/** The index of stamps in `entries`, keyed [session_id, -v]: a session's first is its newest (one `get`, no cursor). */
export const STAMPS = 'stamps'
/**
 * The key of a session's marker in `entries`: [session_id, 0]. A number sorts before every
 * string, so the marker is inside the session's key range (a delete takes it) and outside the
 * range its entries are read from.
 */
export const MARK = 0

/**
 * The layout (version 3). Before it, every append rewrote the session's head record (leaf,
 * message_count, updated_at, v) beside its entry: two puts in two stores, 30-45% over one put.
 * Now the head record in `sessions` holds what changes rarely (meta, attachments) and the
 * volatile part is stamped on the one record each commit writes last for the session:
 * - an append (or any commit that changes only leaf, count, updated_at and v, and writes an entry
 *   of the session) stamps `h` on one of its entries: one put in one store;
 * - any other commit rewrites the head record and stamps the session's marker ([session_id, 0]).
 * Every commit thus writes exactly one stamp with the session's new `v`, and the stamp index
 * ([session_id, -v]) answers "what is on disk now" with one `get`: the newest stamp (a `get`
 * costs less than a cursor, hence -v). A commit built from memory checks that stamp against the
 * head it was built on (the same `v` and incarnation) without waiting for it, and aborts on a
 * mismatch; IndexedDB runs
 * read-write transactions over one store one after the other, so two tabs appending at once
 * see each other and the second runs again on the first's head: one chain.
 * The incarnation is drawn when a session is written for the first time (created, imported,
 * re-created after a delete), so a session deleted and created again under the same id elsewhere
 * never matches a stale copy whose `v` happens to be the same. Reading a session's head takes
 * the head record and the newest stamp (`derive`).
 * A stamp is a read check, not a unique claim: a uniqueness constraint would miss a commit that
 * overwrites the very record holding the stamp (an update of the last entry, a marker rewrite)
 * and a session deleted in between (nothing left to collide with).
 */
export interface Stamp {
  readonly s: string
  readonly v: number
  /** -v: what the index orders by, so the newest stamp comes first. */
  readonly o: number
  /** The incarnation. */
  readonly i: string
  /** On an entry: the leaf, message_count and updated_at at this commit. Absent on a marker. */
  readonly l?: string | null
  readonly n?: number
  readonly u?: number
}
export type Stamped = { h?: Stamp }

export const request = <T>(r: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
// Entries are keyed [session_id, entry_id], so one key range loads or deletes a whole session.
// The whole session, marker included (deletes, stamps):
export const sessionRange = (id: string): IDBKeyRange => IDBKeyRange.bound([id], [id, []])
// Its entries only (entry ids are strings; the marker's key is a number):
const entryRange = (id: string): IDBKeyRange => IDBKeyRange.bound([id, ''], [id, []])
/** What every call gets once the database was deleted under the storage (see `blocking`). */
const gone = (name: string): SessionError =>
  new SessionError('session/storage', `the database "${name}" was deleted while open (the browser evicted this site's data, or it was cleared): open the store again to start clean`)
export const isClosed = (e: unknown): boolean => e instanceof DOMException && e.name === 'InvalidStateError'
/** Entries as read: the stamp is this module's business (deleting the last property keeps the object fast). */
const strip = (records: Array<SessionEntry & Stamped>): SessionEntry[] => {
  for (const r of records) if (r.h !== undefined) delete r.h
  return records
}
/**
 * A session's entries as stored, without their stamps: what `entries` and a reader's `entries`
 * return. A session of about `count` entries (a hint: its head's message count) is read in two
 * parts, one from each end of its key range, in this one transaction, where the browser can
 * read backwards (`getAll` with options: Chromium 141+): it reads the second part while this
 * thread decodes the first (10,000 entries: ~90 ms in the browser's database, then ~20 ms of
 * decoding here; W4). The first part is two thirds: what is left to decode once the browser is
 * done is the last third. The parts overlap by one entry when `count` is exact, which proves
 * nothing lies between them; when it is short (custom entries are not counted), what lies
 * between is read too. `first` gets the first part as it lands: the entries returned begin with it.
 */
export const entriesOf = async (tx: IDBTransaction, id: string, count = 0, first?: (entries: SessionEntry[]) => void): Promise<SessionEntry[]> => {
  const store = tx.objectStore(ENTRIES)
  const query = entryRange(id)
  const all = (q: IDBKeyRange | { query: IDBKeyRange; count: number; direction?: 'prev' }) =>
    request(store.getAll(q as IDBKeyRange) as IDBRequest<Array<SessionEntry & Stamped>>).then(strip)
  const head = (count / 1.5) | 0
  // (A count no session reaches, from a damaged record, is no hint: `getAll` takes 32-bit counts.)
  if (head < 512 || count > 1e9 || !('getAllRecords' in store)) return all(query)
  const [low, high] = await Promise.all([all({ query, count: head }).then((part) => (first?.(part), part)), all({ query, count: count - head + 1, direction: 'prev' })])
  // Fewer than asked: the first part is the whole session.
  const last = low[head - 1]?.id
  if (!last) return low
  const lowest = high.at(-1)!.id
  // Still inside the transaction (in a success event's microtasks): the middle is the same disk.
  const middle = lowest > last ? await all(IDBKeyRange.bound([id, last], [id, lowest], true, true)) : []
  return [...low, ...middle, ...high.reverse().filter((e) => e.id > last)]
}

/**
 * The write half (`idb-writer.ts`): fetched with the engine's batch code, or by the first
 * `transact` of a storage used on its own.
 */
const writerCode = once(() => import('./idb-writer.js'))
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
  engineWrites.add(writerCode)

  const connect = (): Promise<IDBDatabase> => {
    // Looked up at open, never at import: server rendering and Node import this module too.
    if (typeof indexedDB === 'undefined') return Promise.reject(new SessionError('session/storage', 'IndexedDB is not available here'))
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
  const db = (): Promise<IDBDatabase> => (deleted ? Promise.reject(gone(name)) : (connection ??= connect().catch((e) => {
    connection = undefined
    throw e
  })))

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
    const head: SessionHead = h.l !== undefined && h.v > rec.v
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
    name, durability, db, incarnations, derive, newestStamp,
    dropConnection: () => {
      connection = undefined
    },
  }

  let closed = false
  const write = (m: typeof import('./idb-writer.js'), work: Parameters<Storage['transact']>[0]): Promise<void> => {
    const w = (writer ??= m.storageWriter(shared))
    const committed = w.transact(work)
    // Closed while the write half was fetched: its lock goes once this commit finishes, as on `close`.
    if (closed) w.close()
    return committed
  }

  return {
    name: `indexeddb:${name}`,
    ordered: true,
    async open() {
      // Not a source of trust: a storage opens before it first writes, so before it holds the
      // lock (the heads a commit reads inside its transaction are, see `reader.head`).
      return readonly([SESSIONS, ENTRIES], async (tx) => {
        const records = await request(tx.objectStore(SESSIONS).getAll() as IDBRequest<SessionHead[]>)
        return Promise.all(records.map(async (rec) => derive(rec, await request(newestStamp(tx, rec.meta.session_id)))!))
      })
    },
    entries(id, count, first) {
      return readonly([ENTRIES], (tx) => entriesOf(tx, id, count, first))
    },
    attachmentBytes(session_id, attachment_id) {
      // A Blob, or its bytes and type where the engine refuses Blobs (`idb-blobs.ts`).
      return readonly([BLOBS], (tx) => request(tx.objectStore(BLOBS).get([session_id, attachment_id]) as IDBRequest<StoredBytes | undefined>).then(fromStored))
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
      void connection?.then((d) => d.close(), () => {})
      connection = undefined
    },
  }
}
