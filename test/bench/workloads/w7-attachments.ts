import { openDB, unwrap } from 'idb'
import type { Workload } from '../types.js'
import { openColloquy } from '../subjects/colloquy.js'
import { dropDatabases } from '../subjects/databases.js'
import { heapUsed, median, now } from '../subjects/measure.js'
import { inFreshRealm } from '../subjects/realm.js'

const COUNT = 100
const SIZE = 1024 * 1024
const ROUNDS = 3
const IMAGES = 500
const IMAGE_SIZE = 64 * 1024
const MB = 1024 * 1024
const SID = 's_w7'

/** 100 distinct 1 MB Blobs (distinct, so no layer can share bytes between them). */
function blobs(): Blob[] {
  return Array.from({ length: COUNT }, (_, i) => {
    const bytes = new Uint8Array(SIZE)
    for (let k = 0; k < SIZE; k += 4096) bytes[k] = (i + k) & 255
    return new Blob([bytes], { type: 'image/png' })
  })
}

/** Raw IndexedDB: one object store of Blobs keyed [session, id], one transaction per put, like an app would. */
async function rawRound(name: string, files: readonly Blob[]): Promise<number> {
  const db = unwrap(
    await openDB(name, 1, { upgrade: (d) => void d.createObjectStore('blobs') }),
  ) as IDBDatabase
  const req = <T>(r: IDBRequest<T>): Promise<T> =>
    new Promise((res, rej) => ((r.onsuccess = () => res(r.result)), (r.onerror = () => rej(r.error))))
  const t0 = now()
  for (let i = 0; i < files.length; i++) {
    const tx = db.transaction('blobs', 'readwrite', { durability: 'relaxed' })
    tx.objectStore('blobs').put(files[i], [SID, `a_${i}`])
    await new Promise((res, rej) => ((tx.oncomplete = res), (tx.onerror = () => rej(tx.error))))
  }
  let read = 0
  for (let i = 0; i < files.length; i++) {
    const b = await req(
      db
        .transaction('blobs', 'readonly')
        .objectStore('blobs')
        .get([SID, `a_${i}`]) as IDBRequest<Blob>,
    )
    read += (await b.arrayBuffer()).byteLength
  }
  const ms = now() - t0
  db.close()
  if (read !== COUNT * SIZE) throw new Error(`raw read ${read} bytes`)
  return ms
}

async function colloquyRound(name: string, files: readonly Blob[]): Promise<number> {
  const store = await openColloquy(name)
  const { session_id } = await store.create({})
  const t0 = now()
  const ids: string[] = []
  for (const file of files)
    ids.push((await store.putAttachment({ session_id, name: 'shot.png', file })).attachment.attachment_id)
  let read = 0
  for (const id of ids)
    read += (await (await store.getAttachmentBlob(session_id, id))!.arrayBuffer()).byteLength
  const ms = now() - t0
  await store.close()
  if (read !== COUNT * SIZE) throw new Error(`colloquy read ${read} bytes`)
  return ms
}

/** Writes a session of 500 messages, each with a linked image attachment, then closes. */
export async function seedImages(name: string): Promise<string> {
  const store = await openColloquy(name)
  const { session_id } = await store.create({ title: 'pictures' })
  const bytes = new Uint8Array(IMAGE_SIZE).fill(9)
  for (let i = 0; i < IMAGES; i++) {
    bytes[0] = i & 255
    const { attachment } = await store.putAttachment({
      session_id,
      name: `img${i}.png`,
      file: new Blob([bytes], { type: 'image/png' }),
    })
    await store.append({
      session_id,
      message: {
        role: 'user',
        content: [{ type: 'image', mime: 'image/png', data: '', attachment_id: attachment.attachment_id }],
        timestamp: i,
      },
    })
  }
  await store.close()
  return session_id
}

/** In a fresh realm: heap added by opening the store and holding the whole transcript live. */
export async function imageSessionHeap(name: string, session_id: string): Promise<number> {
  const before = await heapUsed()
  const store = await openColloquy(name)
  const items = await new Promise<unknown[]>((resolve, reject) => {
    const sub = store.messages$({ session_id }).subscribe({
      next: (v) => v.length === IMAGES && (resolve(v), queueMicrotask(() => sub.unsubscribe())),
      error: reject,
    })
  })
  const list = await store.listAttachments({ session_id })
  const after = await heapUsed()
  void items
  void list
  await store.close()
  return (after - before) / MB
}

/**
 * W7: attachment bytes. (a) 100 distinct 1 MB Blobs put one by one and read back, Colloquy's
 * `putAttachment({ file })` + `getAttachmentBlob` (it also hashes every upload) against raw
 * IndexedDB Blob puts and gets; throughput, median of 3 interleaved rounds. (b) The heap a
 * 500-image session (64 KB each, 31 MB of bytes) adds when opened and its transcript held live:
 * it must stay far below the bytes.
 */
const w7: Workload = {
  id: 'W7',
  title: 'attachments: 100 x 1 MB put and read back; heap of a 500-image session',
  env: 'browser',
  async run(ctx) {
    const files = blobs()
    const raw: number[] = []
    const col: number[] = []
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 ? ['colloquy', 'raw'] : ['raw', 'colloquy']
      for (const s of order) {
        const ms =
          s === 'raw'
            ? await rawRound(ctx.dbName('w7-raw'), files)
            : await colloquyRound(ctx.dbName('w7-colloquy'), files)
        ;(s === 'raw' ? raw : col).push((COUNT * SIZE) / MB / (ms / 1000))
        ctx.log(`  ${s} round ${r + 1}/${ROUNDS}: ${ms.toFixed(0)} ms`)
        await dropDatabases()
      }
    }
    const rawMBs = median(raw)
    const colMBs = median(col)
    const name = ctx.dbName('w7-images')
    const session_id = await seedImages(name)
    const heaps: number[] = []
    for (let r = 0; r < 3; r++)
      heaps.push(await inFreshRealm<number>(import.meta.url, 'imageSessionHeap', name, session_id))
    const heap = median(heaps)
    const bytesMB = (IMAGES * IMAGE_SIZE) / MB
    return [
      {
        id: 'W7',
        subject: 'raw idb',
        metric: '100 x 1 MB put + read back',
        value: rawMBs,
        unit: 'MB/s',
        better: 'higher',
        note: `median of ${ROUNDS}: ${raw.map((v) => v.toFixed(1)).join(', ')}`,
      },
      {
        id: 'W7',
        subject: 'colloquy',
        metric: '100 x 1 MB put + read back',
        value: colMBs,
        unit: 'MB/s',
        better: 'higher',
        baseline: 'raw idb',
        target: '>= 0.8x raw idb',
        pass: colMBs / rawMBs >= 0.8,
        note: `median of ${ROUNDS}: ${col.map((v) => v.toFixed(1)).join(', ')}; putAttachment hashes (sha256) every upload`,
      },
      {
        id: 'W7',
        subject: 'colloquy',
        metric: `heap of a ${IMAGES}-image session`,
        value: heap,
        unit: 'MB',
        better: 'lower',
        target: `bytes not loaded (< 10% of ${bytesMB.toFixed(0)} MB)`,
        pass: heap < bytesMB / 10,
        note: `store opened + messages$ held + list-attachments, fresh realm, median of 3: ${heaps.map((v) => v.toFixed(2)).join(', ')}`,
      },
    ]
  },
}

export default w7
