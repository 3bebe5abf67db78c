import { unwrap, type IDBPDatabase, type IDBPTransaction } from 'idb'
import { freshIncarnation } from './incarnation.js'
import {
  BLOBS,
  BY_CREATED,
  BY_UPDATED,
  ENTRIES,
  MARK,
  ORDER,
  SESSIONS,
  STAMPS,
  orderOf,
  sessionRange,
  type Stamp,
  type Stamped,
} from './layout.js'
import type { SessionHead } from '../seam.js'

/**
 * Creates the stores of a new database, or upgrades an older one in place, keeping every record
 * (see `VERSION` in `idb-storage.ts`). Runs inside the upgrade's transaction. Fetched only when
 * a database needs it: an open of a current database never waits for this code.
 */
export function upgrade(
  wrapped: IDBPDatabase,
  transaction: IDBPTransaction<unknown, string[], 'versionchange'>,
): void {
  const db = unwrap(wrapped) as IDBDatabase
  const tx = unwrap(transaction) as IDBTransaction
  if (!db.objectStoreNames.contains(SESSIONS)) db.createObjectStore(SESSIONS)
  if (!db.objectStoreNames.contains(ENTRIES)) db.createObjectStore(ENTRIES)
  // The outbox numbers its records itself, so every tab's commits queue up in commit order.
  if (!db.objectStoreNames.contains('outbox')) db.createObjectStore('outbox', { autoIncrement: true })
  if (!db.objectStoreNames.contains('kv')) db.createObjectStore('kv')
  if (!db.objectStoreNames.contains(BLOBS)) db.createObjectStore(BLOBS)
  const entries = tx.objectStore(ENTRIES)
  const stamped = entries.indexNames.contains(STAMPS)
  const ordered = db.objectStoreNames.contains(ORDER)
  if (!ordered) {
    const order = db.createObjectStore(ORDER)
    order.createIndex(BY_UPDATED, ['u', 's'])
    order.createIndex(BY_CREATED, ['c', 's'])
  }
  if (stamped && ordered) return
  if (!stamped) entries.createIndex(STAMPS, ['h.s', 'h.o'])
  const order = tx.objectStore(ORDER)
  const heads = tx.objectStore(SESSIONS).getAll() as IDBRequest<SessionHead[]>
  heads.onsuccess = () => {
    for (const head of heads.result) {
      const id = head.meta.session_id
      if (!stamped) {
        // Heads written before stamps existed: each gets a marker stamped with its own `v` and
        // an incarnation; its record already holds the rest, leaf and counts included.
        entries.put({ h: { s: id, v: head.v, o: -head.v, i: freshIncarnation() } satisfies Stamp }, [
          id,
          MARK,
        ])
        order.put(orderOf(head.meta), id)
        continue
      }
      // Stamped heads (version 3 and 4): the newest stamp may carry a later updated_at.
      const newest = entries.index(STAMPS).get(sessionRange(id)) as IDBRequest<Stamped | undefined>
      newest.onsuccess = () => {
        const h = newest.result?.h
        const meta = h && h.l !== undefined && h.v > head.v ? { ...head.meta, updated_at: h.u! } : head.meta
        order.put(orderOf(meta), id)
      }
    }
  }
}
