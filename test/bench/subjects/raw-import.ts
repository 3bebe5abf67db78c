import { openDB, unwrap } from 'idb'
import { importTranscript } from '../../../packages/formats/src/index.js'

/**
 * The raw IndexedDB baseline of the import workloads: the file parsed by the same reader
 * (`importTranscript`), then the records Colloquy writes for it in Colloquy's layout (a head per
 * session in `sessions` keyed by its id, one record per entry in `entries` keyed
 * [session_id, entry_id]) with the cheapest pattern IndexedDB has for a bulk load: one
 * read-write transaction for everything, relaxed durability, no per-request callbacks.
 * Nothing is checked: this is the floor a store that validates and stays all-or-nothing pays on top of.
 */
export async function rawImport(name: string, blob: Blob, mark: () => void): Promise<{ ms: number; readMs: number; writeMs: number; sessions: number; entries: number }> {
  const db = unwrap(await openDB(name, 1, {
    upgrade(d) {
      d.createObjectStore('sessions')
      d.createObjectStore('entries')
    },
  })) as IDBDatabase
  try {
    const t0 = performance.now()
    const { sessions } = await importTranscript(blob)
    const t1 = performance.now()
    mark()
    const tx = db.transaction(['sessions', 'entries'], 'readwrite', { durability: 'relaxed' })
    const heads = tx.objectStore('sessions')
    const entries = tx.objectStore('entries')
    let count = 0
    for (const s of sessions) {
      const id = s.meta.session_id
      for (const e of s.entries) entries.put(e, [id, e.id])
      heads.put({ meta: s.meta, leaf: s.active_leaf, v: 1 }, id)
      count += s.entries.length
    }
    mark()
    await new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve()
      tx.onabort = tx.onerror = () => reject(tx.error)
    })
    const t2 = performance.now()
    return { ms: t2 - t0, readMs: t1 - t0, writeMs: t2 - t1, sessions: sessions.length, entries: count }
  } finally {
    db.close()
  }
}
