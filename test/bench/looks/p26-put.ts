import { createStore, indexedDbStorage, type Store } from '@colloquy/core'
import type { BenchRow, Workload } from '../types.js'
import { median, now } from '../subjects/measure.js'

// A look for issue 26 (not in the suite: `BENCH_WORKLOADS=test/bench/looks node test/bench/run.mjs
// P26`): the 1 MB attachment's put and cold read, clear and encrypted taking turns, 11 of each,
// and the timeline of the last few (Web Crypto calls with the time they held the page, Blob
// reads, IndexedDB transactions), printed to find where an encrypted put or read spends what a
// clear one does not. The patched calls cost a little of their own: compare the rows of one run.

const MB = 1024 * 1024
const N = 11
type Subject = 'clear' | 'encrypted'
const open = (name: string, s: Subject): Promise<Store> =>
  createStore({
    storage: indexedDbStorage({ name }),
    multiTab: false,
    ...(s === 'encrypted' && { encryption: { passphrase: 'p' } }),
  })

let t0 = 0
let marks: Array<[string, number]> = []
const mark = (what: string): void => void marks.push([what, now() - t0])

function patch(): void {
  const subtle = crypto.subtle as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>
  for (const m of ['digest', 'encrypt', 'decrypt']) {
    const orig = subtle[m]!.bind(crypto.subtle)
    subtle[m] = (...a: unknown[]) => {
      const size = (a[a.length - 1] as ArrayBufferView | ArrayBuffer).byteLength
      const t = now()
      const p = orig(...a)
      mark(`${m}>${size} sync ${(now() - t).toFixed(2)}`)
      return p.then((r) => {
        mark(`${m}<${size}`)
        return r
      })
    }
  }
  const put = IDBObjectStore.prototype.put
  IDBObjectStore.prototype.put = function (this: IDBObjectStore, v: unknown, k?: IDBValidKey) {
    const t = now()
    const r = put.call(this, v, k)
    const isBlob = v && typeof v === 'object' && Object.values(v).some((x) => x instanceof Blob)
    mark(`put ${this.name}${isBlob ? ' (blob)' : ''} ${(now() - t).toFixed(2)}ms`)
    return r
  }
  const tx = IDBDatabase.prototype.transaction
  IDBDatabase.prototype.transaction = function (
    this: IDBDatabase,
    ...a: Parameters<IDBDatabase['transaction']>
  ) {
    const t = tx.apply(this, a)
    const names = String(a[0])
    mark(`tx> ${names}`)
    t.addEventListener('complete', () => mark(`tx< ${names}`))
    return t
  }
  const blobAb = Blob.prototype.arrayBuffer
  Blob.prototype.arrayBuffer = function (this: Blob) {
    mark(`blob.arrayBuffer> ${this.size}`)
    return blobAb.call(this).then((r) => {
      mark(`blob.arrayBuffer< ${this.size}`)
      return r
    })
  }
}

const p26: Workload = {
  id: 'P26',
  title: '1 MB put timeline',
  env: 'browser',
  async run(ctx) {
    const bytes = new Uint8Array(MB)
    for (let i = 0; i < MB; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
    const stores = new Map<Subject, Store>()
    const names = new Map<Subject, string>()
    for (const s of ['clear', 'encrypted'] as Subject[]) {
      names.set(s, ctx.dbName(`p26-${s}`))
      stores.set(s, await open(names.get(s)!, s))
    }
    patch()
    const totals = new Map<Subject, number[]>()
    const timelines: string[] = []
    const totalsRead: BenchRow[] = []
    for (let i = 0; i < N; i++) {
      for (const s of (i % 2 ? ['encrypted', 'clear'] : ['clear', 'encrypted']) as Subject[]) {
        const store = stores.get(s)!
        const { session_id } = await store.create({})
        marks = []
        t0 = now()
        await store.putAttachment({ session_id, name: 'a.bin', file: new Blob([bytes]) })
        const ms = now() - t0
        totals.set(s, [...(totals.get(s) ?? []), ms])
        if (i >= N - 3)
          timelines.push(
            `${s} ${ms.toFixed(1)}: ${marks.map(([w, t]) => `${t.toFixed(1)} ${w}`).join(' | ')}`,
          )
      }
    }
    const ids = new Map<Subject, Array<[string, string]>>()
    for (const s of ['clear', 'encrypted'] as Subject[]) {
      const store = stores.get(s)!
      for (let i = 0; i < N; i++) {
        const { session_id } = await store.create({})
        const { attachment } = await store.putAttachment({
          session_id,
          name: 'a.bin',
          file: new Blob([bytes]),
        })
        ids.set(s, [...(ids.get(s) ?? []), [session_id, attachment.attachment_id]])
      }
      await store.close()
    }
    const reads = new Map<Subject, number[]>()
    for (let i = 0; i < N; i++) {
      for (const s of (i % 2 ? ['encrypted', 'clear'] : ['clear', 'encrypted']) as Subject[]) {
        const store = await open(names.get(s)!, s)
        const [sid, aid] = ids.get(s)![i]!
        marks = []
        t0 = now()
        const blob = await store.getAttachmentBlob(sid, aid)
        mark('blob resolved')
        const ab = await blob!.arrayBuffer()
        const ms = now() - t0
        if (ab.byteLength !== MB) throw new Error(`lost bytes ${s} ${ab.byteLength} ${blob!.size}`)
        reads.set(s, [...(reads.get(s) ?? []), ms])
        if (i >= N - 2)
          timelines.push(
            `READ ${s} ${ms.toFixed(1)}: ${marks.map(([w, t]) => `${t.toFixed(1)} ${w}`).join(' | ')}`,
          )
        await store.close()
      }
    }
    for (const [s, v] of reads)
      totalsRead.push({
        id: 'P26',
        subject: s,
        metric: 'read 1 MB cold',
        value: median(v),
        unit: 'ms',
        note: v.map((x) => x.toFixed(1)).join(' '),
      })
    for (const l of timelines) console.log(`[bench] ${l}`)
    const rows: BenchRow[] = []
    for (const [s, v] of totals)
      rows.push({
        id: 'P26',
        subject: s,
        metric: 'put 1 MB',
        value: median(v),
        unit: 'ms',
        note: v.map((x) => x.toFixed(1)).join(' '),
      })
    return [...rows, ...totalsRead]
  },
}
export default p26
