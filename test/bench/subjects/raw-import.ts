import { openDB, unwrap } from 'idb'
import { importTranscript } from '../../../packages/formats/src/index.js'

/**
 * The raw IndexedDB baseline of the import workloads: the file parsed by the same reader
 * (`importTranscript`), then the records Colloquy writes for it in Colloquy's layout (a head per
 * session in `sessions` keyed by its id, one record per entry in `entries` keyed
 * [session_id, entry_id]) with the cheapest patterns IndexedDB has for a bulk load: relaxed
 * durability, no per-request callbacks, and either one read-write transaction for everything
 * (`chunk` 0) or transactions of `chunk` entries all queued at once.
 * Nothing is checked: this is the floor a store that validates and stays all-or-nothing pays on top of.
 */
export async function rawImport(
  name: string,
  blob: Blob,
  mark: () => void,
  chunk = 0,
): Promise<{ ms: number; readMs: number; writeMs: number; sessions: number; entries: number }> {
  const db = unwrap(
    await openDB(name, 1, {
      upgrade(d) {
        d.createObjectStore('sessions')
        d.createObjectStore('entries')
      },
    }),
  ) as IDBDatabase
  try {
    const t0 = performance.now()
    const { sessions } = await importTranscript(blob)
    const t1 = performance.now()
    mark()
    // All transactions are queued at once: IndexedDB runs them in order, committing one while
    // the page serializes the next (with `chunk` 0, everything goes in one transaction).
    const done: Promise<void>[] = []
    let tx: IDBTransaction | undefined
    let inTx = 0
    const next = (): IDBTransaction => {
      const t = db.transaction(['sessions', 'entries'], 'readwrite', { durability: 'relaxed' })
      done.push(
        new Promise<void>((resolve, reject) => {
          t.oncomplete = () => resolve()
          t.onabort = t.onerror = () => reject(t.error)
        }),
      )
      inTx = 0
      return t
    }
    let count = 0
    for (const s of sessions) {
      const id = s.meta.session_id
      for (const e of s.entries) {
        if (!tx || (chunk > 0 && inTx === chunk)) tx = next()
        tx.objectStore('entries').put(e, [id, e.id])
        inTx++
      }
      ;(tx ?? (tx = next())).objectStore('sessions').put({ meta: s.meta, leaf: s.active_leaf, v: 1 }, id)
      count += s.entries.length
    }
    mark()
    await Promise.all(done)
    const t2 = performance.now()
    return { ms: t2 - t0, readMs: t1 - t0, writeMs: t2 - t1, sessions: sessions.length, entries: count }
  } finally {
    db.close()
  }
}
