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

/** Every record of every object store of the database, Blobs read as their bytes, as text. */
export async function rawText(name: string): Promise<string> {
  const db = await rawDb(name)
  const parts: string[] = []
  const dec = new TextDecoder('latin1')
  try {
    for (const store of [...db.objectStoreNames]) {
      const s = db.transaction(store).objectStore(store)
      const [keys, values] = await Promise.all([req(s.getAllKeys()), req(s.getAll())])
      for (let i = 0; i < values.length; i++) {
        const v = values[i]
        const bytes =
          v instanceof Blob
            ? dec.decode(await v.arrayBuffer())
            : v && typeof v === 'object' && 'bytes' in v && v.bytes instanceof ArrayBuffer
              ? dec.decode(v.bytes)
              : ''
        parts.push(`${store} ${JSON.stringify(keys[i])} ${JSON.stringify(v)} ${bytes}`)
      }
    }
  } finally {
    db.close()
  }
  return parts.join('\n')
}
