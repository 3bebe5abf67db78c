import type { BenchRow, Workload } from '../types.js'
import { median, now } from '../subjects/measure.js'

// A look for issue 26 (`BENCH_WORKLOADS=test/bench/looks node test/bench/run.mjs P26B`): what
// writing 1 MB costs into a buffer never touched against one written before (page faults), and
// making a 1 MB Blob, medians of 21. Where a fault is slow (a virtual machine), the first is most
// of an attachment read's copy: see core's util/warm-buffer.ts.

const MB = 1024 * 1024
const p26b: Workload = {
  id: 'P26B',
  title: 'copy into fresh vs touched buffer',
  env: 'browser',
  async run() {
    const pieces = Array.from({ length: 4 }, () => crypto.getRandomValues(new Uint8Array(65536)))
    const src = pieces.map((p) => {
      const b = new Uint8Array(262144)
      for (let i = 0; i < 4; i++) b.set(p, i * 65536)
      return b
    })
    const fresh: number[] = []
    const touched: number[] = []
    const blobT: number[] = []
    for (let r = 0; r < 21; r++) {
      let t = now()
      const a = new Uint8Array(MB)
      for (let i = 0; i < 4; i++) a.set(src[i]!, i * 262144)
      fresh.push(now() - t)
      const b = new Uint8Array(MB)
      b.fill(0)
      await new Promise((r) => setTimeout(r, 5))
      t = now()
      for (let i = 0; i < 4; i++) b.set(src[i]!, i * 262144)
      touched.push(now() - t)
      t = now()
      const bl = new Blob([b])
      blobT.push(now() - t)
      if (bl.size !== MB) throw new Error('x')
      await new Promise((r) => setTimeout(r, 5))
    }
    const row = (m: string, v: number[]): BenchRow => ({
      id: 'P26B',
      subject: 'x',
      metric: m,
      value: median(v),
      unit: 'ms',
      note: v.map((x) => x.toFixed(2)).join(' '),
    })
    return [row('fresh', fresh), row('touched', touched), row('blob', blobT)]
  },
}
export default p26b
