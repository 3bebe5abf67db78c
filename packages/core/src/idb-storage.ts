import { openDB, unwrap, type IDBPDatabase } from 'idb'
import { SessionError } from './errors.js'
import type { SessionEntry } from './model.js'
import { StaleHeadError, type SessionHead, type Storage, type StorageReader, type WriteSet } from './storage.js'

export interface IndexedDbStorageOptions {
  /** Database name; default `"colloquy"`. Stores on the same name share data across tabs. */
  name?: string
  /** `relaxed` (default) lets the browser acknowledge a commit before flushing to disk. */
  durability?: 'relaxed' | 'strict' | 'default'
}

// Version 2 added the attachment byte store; opening an older database adds it and keeps the rest.
const VERSION = 2
const SESSIONS = 'sessions'
const ENTRIES = 'entries'
/** Attachment bytes as Blobs keyed [session_id, attachment_id]: never read with a session. */
const BLOBS = 'attachments'
/** Stores beside the session data, written in the same transactions (sync outbox, checkpoints). */
export const SIDE_STORES = ['outbox', 'kv'] as const
const ALL = [SESSIONS, ENTRIES, BLOBS, ...SIDE_STORES]

const request = <T>(r: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
const done = (tx: IDBTransaction): Promise<void> =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve()
    tx.onabort = tx.onerror = () => reject(tx.error ?? new DOMException('transaction aborted', 'AbortError'))
  })
// Entries are keyed [session_id, entry_id], so one key range loads or deletes a whole session.
const sessionRange = (id: string): IDBKeyRange => IDBKeyRange.bound([id], [id, []])
const isClosed = (e: unknown): boolean => e instanceof DOMException && e.name === 'InvalidStateError'
const abort = (tx: IDBTransaction): void => {
  try {
    tx.abort()
  } catch {
    // already finished
  }
}
/** The stores a write set touches: sessions and entries always, the others only when written. */
const scopeOf = (w: WriteSet): string[] => {
  const scope = new Set([SESSIONS, ENTRIES])
  if (w.blobs?.length || w.deleted.size) scope.add(BLOBS)
  for (const s of w.side) scope.add(s.store)
  return [...scope]
}

/**
 * IndexedDB storage. Every browser quirk lives here: connections closed by the browser or by
 * another tab's upgrade are reopened once, `versionchange` closes this connection instead of
 * blocking the other tab, and a failed request aborts the whole transaction.
 */
export function indexedDbStorage(options: IndexedDbStorageOptions = {}): Storage {
  const name = options.name ?? 'colloquy'
  const durability = options.durability ?? 'relaxed'
  let connection: Promise<IDBDatabase> | undefined

  const connect = (): Promise<IDBDatabase> => {
    // Looked up at open, never at import: server rendering and Node import this module too.
    if (typeof indexedDB === 'undefined') return Promise.reject(new SessionError('session/storage', 'IndexedDB is not available here'))
    return openDB(name, VERSION, {
      upgrade(db) {
        if (!db.objectStoreNames.contains(SESSIONS)) db.createObjectStore(SESSIONS)
        if (!db.objectStoreNames.contains(ENTRIES)) db.createObjectStore(ENTRIES)
        // The outbox numbers its records itself, so every tab's commits queue up in commit order.
        if (!db.objectStoreNames.contains('outbox')) db.createObjectStore('outbox', { autoIncrement: true })
        if (!db.objectStoreNames.contains('kv')) db.createObjectStore('kv')
        if (!db.objectStoreNames.contains(BLOBS)) db.createObjectStore(BLOBS)
      },
      blocking() {
        // Another tab wants a newer schema: step aside now, reopen on the next commit.
        void connection?.then((db) => db.close())
        connection = undefined
      },
      terminated() {
        connection = undefined
      },
    }).then((db: IDBPDatabase) => unwrap(db) as IDBDatabase)
  }
  const db = (): Promise<IDBDatabase> => (connection ??= connect().catch((e) => {
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

  return {
    name: `indexeddb:${name}`,
    ordered: true,
    async open() {
      return readonly([SESSIONS], (tx) => request(tx.objectStore(SESSIONS).getAll() as IDBRequest<SessionHead[]>))
    },
    entries(id) {
      return readonly([ENTRIES], (tx) => request(tx.objectStore(ENTRIES).getAll(sessionRange(id)) as IDBRequest<SessionEntry[]>))
    },
    attachmentBytes(session_id, attachment_id) {
      return readonly([BLOBS], (tx) => request(tx.objectStore(BLOBS).get([session_id, attachment_id]) as IDBRequest<Blob | undefined>))
    },
    async transact(work) {
      for (let attempt = 0; ; attempt++) {
        let database: IDBDatabase
        let tx: IDBTransaction | undefined
        // Heads to check before the commit: read ahead of the writes, never waited for.
        const checks: Array<readonly [string, (disk: SessionHead | undefined) => boolean]> = []
        // A batch that reads waits for its reads, so it takes every store; one that only checks
        // heads is known whole before the transaction opens and takes only the stores it writes.
        const open = (scope: string[]): IDBTransaction => (tx ??= database.transaction(scope, 'readwrite', { durability }))
        let writes: Awaited<ReturnType<typeof work>>
        try {
          database = await db()
          const reader: StorageReader = {
            head: (id) => request(open(ALL).objectStore(SESSIONS).get(id) as IDBRequest<SessionHead | undefined>),
            entries: (id) => request(open(ALL).objectStore(ENTRIES).getAll(sessionRange(id)) as IDBRequest<SessionEntry[]>),
            expect: (id, ok) => void checks.push([id, ok]),
          }
          writes = await work(reader)
          open(scopeOf(writes))
        } catch (e) {
          if (tx) abort(tx)
          if (attempt > 0 || !isClosed(e)) throw e
          connection = undefined
          continue
        }
        const t = tx!
        const finished = done(t)
        finished.catch(() => {})
        let stale: string | undefined
        try {
          const sessions = t.objectStore(SESSIONS)
          const entries = t.objectStore(ENTRIES)
          for (const [id, ok] of checks) {
            const r = sessions.get(id) as IDBRequest<SessionHead | undefined>
            // Requests run in order: this answer arrives before the writes below can commit,
            // and aborting here takes them all back.
            r.onsuccess = () => {
              if (stale === undefined && !ok(r.result)) {
                stale = id
                abort(t)
              }
            }
          }
          const blobs = writes.blobs?.length || writes.deleted.size ? t.objectStore(BLOBS) : undefined
          // A fork's copies read their source first: a session deleted in the same batch still lends its bytes.
          // Without copies the writes go out now, not a microtask later.
          const copies = writes.blobs?.some((b) => b.op === 'copy')
            ? await Promise.all(
              writes.blobs.flatMap((b) => (b.op === 'copy' ? [request(blobs!.get([b.from_session_id, b.attachment_id]) as IDBRequest<Blob | undefined>).then((bytes) => ({ b, bytes }))] : [])),
            )
            : []
          for (const id of writes.deleted) {
            sessions.delete(id)
            entries.delete(sessionRange(id))
            blobs!.delete(sessionRange(id))
          }
          for (const b of writes.blobs ?? []) {
            if (b.op === 'put') blobs!.put(b.bytes, [b.session_id, b.attachment_id])
            else if (b.op === 'delete') blobs!.delete([b.session_id, b.attachment_id])
          }
          for (const { b, bytes } of copies) if (bytes) blobs!.put(bytes, [b.session_id, b.attachment_id])
          for (const [id, head] of writes.heads) sessions.put(head, id)
          for (const [id, batch] of writes.entries) for (const [eid, e] of batch) entries.put(e, [id, eid])
          for (const s of writes.side) {
            if (s.value === undefined) t.objectStore(s.store).delete(s.key!)
            else if (s.key === undefined) t.objectStore(s.store).put(s.value)
            else t.objectStore(s.store).put(s.value, s.key)
          }
        } catch (e) {
          abort(t)
          if (stale !== undefined) throw new StaleHeadError(stale)
          throw e
        }
        try {
          return await finished
        } catch (e) {
          if (stale !== undefined) throw new StaleHeadError(stale)
          // A connection the browser closed under us aborts the transaction: reopen once.
          if (attempt > 0 || !(e instanceof DOMException) || (e.name !== 'InvalidStateError' && e.name !== 'UnknownError')) throw e
          connection = undefined
        }
      }
    },
    sideRecords(store) {
      return readonly([store], async (tx) => {
        const s = tx.objectStore(store)
        const [keys, values] = await Promise.all([request(s.getAllKeys()), request(s.getAll())])
        return keys.map((key, i) => ({ key: key as string | number, value: values[i] }))
      })
    },
    close() {
      void connection?.then((d) => d.close(), () => {})
      connection = undefined
    },
  }
}
