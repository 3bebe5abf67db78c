import { openDB, unwrap } from 'idb'
import type { SessionEntry } from '@colloquy/core'

/**
 * The raw IndexedDB baseline: the layout Colloquy uses (one record per entry, out-of-line key
 * [session_id, entry_id]) written with the cheapest pattern for each workload: no per-request
 * promises, one listener on the transaction, relaxed durability like Colloquy's default.
 */

const STORE = 'entries'

export async function openRaw(name: string): Promise<IDBDatabase> {
  const db = await openDB(name, 1, {
    upgrade(d) {
      d.createObjectStore(STORE)
    },
  })
  return unwrap(db) as IDBDatabase
}

export const sessionRange = (session_id: string): IDBKeyRange =>
  IDBKeyRange.bound([session_id], [session_id, []])

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve()
    tx.onabort = tx.onerror = () => reject(tx.error)
  })
}

/** Puts `entries` in one read-write transaction; resolves when it committed. */
export function putEntries(
  db: IDBDatabase,
  session_id: string,
  entries: readonly SessionEntry[],
): Promise<void> {
  const tx = db.transaction(STORE, 'readwrite', { durability: 'relaxed' })
  const store = tx.objectStore(STORE)
  for (const e of entries) store.put(e, [session_id, e.id])
  // Nothing more will be asked of it: commit now rather than after the last put's answer comes
  // back to the page (the cheapest pattern; Colloquy does the same when it has nothing to check).
  tx.commit?.()
  return done(tx)
}

/**
 * A database laid out as Colloquy's `entries` store is: the newest entry a commit writes carries
 * the session's new version (a stamp), indexed by session and descending version, which is how
 * a session's head is found without a second record per commit.
 */
export async function openRawStamped(name: string): Promise<IDBDatabase> {
  const db = await openDB(name, 1, {
    upgrade(d) {
      d.createObjectStore(STORE).createIndex('stamps', ['h.s', 'h.o'])
    },
  })
  return unwrap(db) as IDBDatabase
}

/** `putEntries` on a stamped store: the last entry carries version `v` of the session. */
export function putStamped(
  db: IDBDatabase,
  session_id: string,
  entries: readonly SessionEntry[],
  v: number,
): Promise<void> {
  const tx = db.transaction(STORE, 'readwrite', { durability: 'relaxed' })
  const store = tx.objectStore(STORE)
  const newest = entries.length - 1
  for (let i = 0; i < newest; i++) store.put(entries[i], [session_id, entries[i]!.id])
  const e = entries[newest]
  if (e)
    store.put({ ...e, h: { s: session_id, v, o: -v, l: e.id, n: v, u: e.timestamp, i: 'bench' } }, [
      session_id,
      e.id,
    ])
  tx.commit?.()
  return done(tx)
}

/** One session's entries, with one getAll over its key range. */
export function getSession(db: IDBDatabase, session_id: string): Promise<SessionEntry[]> {
  return new Promise((resolve, reject) => {
    const r = db.transaction(STORE, 'readonly').objectStore(STORE).getAll(sessionRange(session_id))
    r.onsuccess = () => resolve(r.result as SessionEntry[])
    r.onerror = () => reject(r.error)
  })
}
