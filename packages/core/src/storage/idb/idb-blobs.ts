import type { WriteSet } from '../seam.js'
import type { StoredBytes } from './stored-bytes.js'

// Attachment bytes where the engine cannot store a Blob. WebKit refuses Blobs in sessions whose
// storage is ephemeral (private browsing, automation): the put fails with "UnknownError: Error
// preparing Blob/File data to be stored in object store" and aborts the whole transaction. There
// the bytes go in as an ArrayBuffer with the type beside it, and read back as a Blob of the
// same bytes and type: nothing lost, and callers never see the difference.

/** Per database name: whether a Blob can be put there, asked once by a put that is taken back. */
const support = new Map<string, boolean | Promise<boolean>>()
/** Each Blob's bytes, read once for a database that refuses Blobs (a batch may run again). */
const converted = new WeakMap<Blob, StoredBytes>()

function probe(db: IDBDatabase, store: string): Promise<boolean> {
  return new Promise((resolve) => {
    let tx: IDBTransaction
    try {
      tx = db.transaction([store], 'readwrite')
    } catch {
      // Closed under us: the batch fails or runs again and asks again then.
      return resolve(true)
    }
    tx.onabort = () => resolve(true)
    try {
      const r = tx.objectStore(store).put(new Blob([new Uint8Array([1])]), ['', ''])
      r.onsuccess = () => {
        resolve(true)
        tx.abort()
      }
      r.onerror = (e) => {
        e.preventDefault()
        resolve(false)
      }
    } catch {
      resolve(false)
      tx.abort()
    }
  })
}

const puts = (writes: WriteSet): Blob[] =>
  (writes.blobs ?? []).flatMap((b) => (b.op === 'put' ? [b.bytes] : []))

/**
 * What a batch must wait for before its transaction can put its Blobs synchronously: the first
 * probe of this database, then, where Blobs are refused, reading each Blob's bytes. Undefined
 * when nothing is left to wait for (no puts, or Blobs stored as they are): no microtask then.
 */
export function blobsReady(
  name: string,
  db: IDBDatabase,
  store: string,
  writes: WriteSet,
): Promise<void> | undefined {
  const blobs = puts(writes)
  const known = blobs.length ? support.get(name) : true
  if (known === true) return undefined
  if (known === false) {
    const left = blobs.filter((b) => !converted.has(b))
    if (!left.length) return undefined
    return Promise.all(
      left.map(async (b) => void converted.set(b, { bytes: await b.arrayBuffer(), type: b.type })),
    ).then(() => undefined)
  }
  let asked = known
  if (!asked) support.set(name, (asked = probe(db, store).then((ok) => (support.set(name, ok), ok))))
  return asked.then(() => blobsReady(name, db, store, writes))
}

/** The record to put for `blob` in database `name`, once `blobsReady` has nothing left to wait for. */
export const toStored = (name: string, blob: Blob): StoredBytes =>
  support.get(name) === false ? converted.get(blob)! : blob
