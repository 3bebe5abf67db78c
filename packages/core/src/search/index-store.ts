import { openDB, unwrap, type IDBPDatabase } from 'idb'
import type { DocBlock } from './doc-block.js'
import type { DocTerms } from './inverted-index.js'

/** A session as persisted: its mark (the store's head it reflects) and its title's document. */
export interface SessionRecord {
  readonly sid: string
  readonly mark: string
  readonly title: DocTerms | null
}

/** What one reconciling pass changed, written in one transaction (blocks and marks together). */
export interface IndexWrite {
  /** Sessions to forget, before anything else. */
  readonly deleted: readonly string[]
  readonly sessions: readonly SessionRecord[]
  /** Blocks written whole (each replaces the block of its key). */
  readonly blocks: readonly DocBlock[]
  /** `[sid, n]` of blocks left without documents. */
  readonly dropped: readonly (readonly [string, number])[]
}

export interface IndexStore {
  /** Every session record. */
  sessions(): Promise<SessionRecord[]>
  /**
   * The blocks, `batch` at a time in key order, each page its own read: a page is cloned out of
   * the database in one piece on the main thread, so a large index read whole would hold the
   * page up (a 100,000-document read for a second and more) while the app opens.
   */
  blocks(batch: number): AsyncGenerator<DocBlock[]>
  write(w: IndexWrite): Promise<void>
  /** Replaces everything on disk with `all` (a tab that becomes the writer writes what it holds). */
  replace(all: { sessions: SessionRecord[]; blocks: DocBlock[] }): Promise<void>
  close(): void
}

/**
 * 3: a session's documents in blocks (`DocBlock`, store `blocks`); 2 held one record per document
 * (store `docs`), its terms packed in one string and one typed array; 1 held arrays of them. An
 * older index found on open is emptied, not converted: it is derived from the store, and an empty
 * index is read again from the store by the first pass, the path every new device takes (and the
 * one the tests hold to the store). Converting would read and rewrite every record inside the
 * upgrade's transaction, which holds up every other tab's open of the database.
 */
export const INDEX_VERSION = 3

/**
 * The index's own IndexedDB database, beside the store's (never inside it: the store's schema is
 * the store's). A session's documents and its mark are written in one transaction, so the mark
 * never claims more than the documents on disk: after a crash, a reopen reads every session whose
 * mark differs from the store's head again, and finds nothing the store no longer holds.
 */
export async function openIndexStore(name: string, onGone: () => void): Promise<IndexStore> {
  let gone = false
  const db: IDBPDatabase = await openDB(name, INDEX_VERSION, {
    upgrade(db) {
      // From an older version: its stores are dropped, records and all (see INDEX_VERSION).
      for (const old of [...db.objectStoreNames]) db.deleteObjectStore(old)
      db.createObjectStore('sessions', { keyPath: 'sid' })
      db.createObjectStore('blocks', { keyPath: ['sid', 'n'] })
    },
    // Another tab deletes the database (or upgrades it): close now rather than block it. A write
    // in flight then fails, and is of no use any more: `write` and `replace` resolve quietly.
    blocking() {
      gone = true
      db.close()
      onGone()
    },
  })
  const unlessGone = (p: Promise<unknown>): Promise<void> =>
    p.then(
      () => {},
      (e: unknown) => {
        if (!gone) throw e
      },
    )
  return {
    sessions: () => db.getAll('sessions') as Promise<SessionRecord[]>,
    async *blocks(batch) {
      let after: IDBValidKey | undefined
      for (;;) {
        const tx = db.transaction('blocks', 'readonly')
        const range = after === undefined ? null : IDBKeyRange.lowerBound(after, true)
        const [keys, page] = await Promise.all([
          tx.store.getAllKeys(range, batch),
          tx.store.getAll(range, batch) as Promise<DocBlock[]>,
        ])
        if (page.length) yield page
        if (keys.length < batch) return
        after = keys[keys.length - 1]
      }
    },
    async write(w) {
      if (gone) return
      // The plain requests, not idb's promise per request (measured: its wrapping of 20,000 puts
      // was a third of the first pass's time on the page's thread).
      await unlessGone(
        inTransaction(db, (sessions, blocks) => {
          for (const sid of w.deleted) {
            sessions.delete(sid)
            blocks.delete(IDBKeyRange.bound([sid], [sid, []]))
          }
          for (const [sid, n] of w.dropped) blocks.delete([sid, n])
          for (const b of w.blocks) blocks.put(b)
          for (const s of w.sessions) sessions.put(s)
        }),
      )
    },
    async replace(all) {
      if (gone) return
      await unlessGone(
        inTransaction(db, (sessions, blocks) => {
          sessions.clear()
          blocks.clear()
          for (const b of all.blocks) blocks.put(b)
          for (const s of all.sessions) sessions.put(s)
        }),
      )
    },
    close: () => db.close(),
  }
}

/**
 * Makes `fill`'s requests in one transaction over both stores; resolves when it commits. A
 * request that fails aborts the transaction (its `error` is then the request's); one that throws
 * as it is made (a value that cannot be cloned) aborts it too, and the write rejects with that.
 */
function inTransaction(
  db: IDBPDatabase,
  fill: (sessions: IDBObjectStore, blocks: IDBObjectStore) => void,
): Promise<void> {
  // Relaxed, as the store's own writes: a mark lost with its documents is read again on reopen.
  const tx = unwrap(db).transaction(['sessions', 'blocks'], 'readwrite', { durability: 'relaxed' })
  const done = new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve()
    tx.onabort = () => reject(tx.error ?? new DOMException('transaction aborted', 'AbortError'))
  })
  try {
    fill(tx.objectStore('sessions'), tx.objectStore('blocks'))
  } catch (err) {
    done.catch(() => {})
    try {
      tx.abort()
    } catch {
      // Aborted already.
    }
    return Promise.reject(err)
  }
  return done
}
