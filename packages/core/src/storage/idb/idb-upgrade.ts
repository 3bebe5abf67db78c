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
 * a database needs it: an open of a current database never waits for this code. `old` is the
 * version the database had (0: new).
 */
export function upgrade(
  wrapped: IDBPDatabase,
  old: number,
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
  if (!db.objectStoreNames.contains(ORDER)) {
    const order = db.createObjectStore(ORDER)
    order.createIndex(BY_UPDATED, ['u', 's'])
    order.createIndex(BY_CREATED, ['c', 's'])
  }
  if (!stamped) entries.createIndex(STAMPS, ['h.s', 'h.o'])
  // New: nothing to carry over. Version 6 and later: every order record is whole.
  if (old === 0 || old >= 6) return
  // Every order record written again from its head and newest stamp (version 5's lack the
  // leaf, count, `v` and incarnation; versions before it have none).
  const order = tx.objectStore(ORDER)
  const heads = tx.objectStore(SESSIONS).getAll() as IDBRequest<SessionHead[]>
  // A head without a stamp (written before stamps existed) gets a marker stamped with its own
  // `v` and a new incarnation; its record already holds the rest, leaf and counts included.
  const unstamped = (head: SessionHead): void => {
    const id = head.meta.session_id
    const i = freshIncarnation()
    entries.put({ h: { s: id, v: head.v, o: -head.v, i } satisfies Stamp }, [id, MARK])
    order.put(orderOf(head, i), id)
  }
  heads.onsuccess = () => {
    for (const head of heads.result) {
      const id = head.meta.session_id
      if (!stamped) {
        unstamped(head)
        continue
      }
      // Stamped heads (versions 3 to 5): the newest stamp may carry a later leaf, count and
      // updated_at (an append wrote only its entry), and always carries the incarnation.
      const newest = entries.index(STAMPS).get(sessionRange(id)) as IDBRequest<Stamped | undefined>
      newest.onsuccess = () => {
        const h = newest.result?.h
        if (!h) return unstamped(head)
        const now: SessionHead =
          h.l !== undefined && h.v > head.v
            ? { ...head, meta: { ...head.meta, updated_at: h.u!, message_count: h.n! }, leaf: h.l, v: h.v }
            : head
        order.put(orderOf(now, h.i), id)
      }
    }
  }
}
