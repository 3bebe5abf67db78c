// The records of an IndexedDB database read raw, for marker scans: what an encrypted store (or
// sync's outbox beside it) left at rest, as whoever holds the disk would find it. Runs in a page
// (the browser project's tests, and pages Playwright drives).

export const rawDb = (name: string): Promise<IDBDatabase> =>
  new Promise((resolve, reject) => {
    const r = indexedDB.open(name)
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
export const req = <T>(r: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })

const latin1 = new TextDecoder('latin1')

/**
 * A record as JSON, every binary value in it (an encrypted entry's box is bytes at rest) spelled
 * as the characters its bytes are, so a marker in them shows as it would in a file.
 */
const recordText = (v: unknown): string =>
  JSON.stringify(v, (_key, x: unknown) =>
    x instanceof ArrayBuffer || ArrayBuffer.isView(x) ? latin1.decode(x) : x,
  )

/** Every record of every object store of the database, Blobs read as their bytes, as text. */
export async function rawText(name: string): Promise<string> {
  const db = await rawDb(name)
  const parts: string[] = []
  try {
    for (const store of [...db.objectStoreNames]) {
      const s = db.transaction(store).objectStore(store)
      const [keys, values] = await Promise.all([req(s.getAllKeys()), req(s.getAll())])
      for (let i = 0; i < values.length; i++) {
        const v = values[i]
        // A Blob's bytes are not in its JSON; bytes anywhere else are (`recordText`).
        const bytes = v instanceof Blob ? latin1.decode(await v.arrayBuffer()) : ''
        parts.push(`${store} ${JSON.stringify(keys[i])} ${recordText(v)} ${bytes}`)
      }
    }
  } finally {
    db.close()
  }
  return parts.join('\n')
}
