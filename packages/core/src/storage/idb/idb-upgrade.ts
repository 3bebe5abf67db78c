import { unwrap, type IDBPDatabase, type IDBPTransaction } from 'idb'
import { freshIncarnation } from './incarnation.js'
import { BLOBS, ENTRIES, MARK, SESSIONS, STAMPS, type Stamp } from './layout.js'
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
  if (entries.indexNames.contains(STAMPS)) return
  entries.createIndex(STAMPS, ['h.s', 'h.o'])
  // Heads written before stamps existed: each gets a marker stamped with its own `v` and
  // an incarnation; its record already holds the rest, leaf and counts included.
  const heads = tx.objectStore(SESSIONS).getAll() as IDBRequest<SessionHead[]>
  heads.onsuccess = () => {
    for (const head of heads.result) {
      const id = head.meta.session_id
      entries.put({ h: { s: id, v: head.v, o: -head.v, i: freshIncarnation() } satisfies Stamp }, [id, MARK])
    }
  }
}
