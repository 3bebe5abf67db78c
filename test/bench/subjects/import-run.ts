import { createStore, indexedDbStorage } from '@colloquy/core'
import { importInto } from '../../../packages/formats/src/index.js'
import type { BenchContext } from '../types.js'

// What the import workloads (F1, F2) share: generated texts and one measured import.

/** Filler text of `n` characters from `words`, varied by `seed`. */
export function prose(words: readonly string[], n: number, seed: number): string {
  let s = ''
  for (let i = 0; s.length < n; i++) s += `${words[(seed + i * 7) % words.length]} `
  return s.slice(0, n)
}

const heapUsed = (): number | undefined => (performance as Performance & { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize

export interface ImportRun {
  /** The whole import, in ms. */
  ms: number
  /** From the start until the file was read and parsed. */
  readMs: number
  /** From the end of reading until the first chunk was on disk. */
  firstWriteMs: number
  sessions: number
  entries: number
  /** usedJSHeapSize before the import, the peak sampled every 5 ms during it, and (with gc) after it. */
  base: number
  peak: number
  after: number | undefined
}

/** Imports `blob` into a fresh IndexedDB store named under `db`, sampling the heap while it runs. */
export async function measureImport(ctx: BenchContext, db: string, blob: Blob, chunkSize?: number): Promise<ImportRun> {
  const store = await createStore({ storage: indexedDbStorage({ name: ctx.dbName(db) }), multiTab: false })
  // Only when Chromium runs with --js-flags=--expose-gc: start from a collected heap.
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  let peak = heapUsed() ?? 0
  const base = peak
  const sampler = setInterval(() => {
    peak = Math.max(peak, heapUsed() ?? 0)
  }, 5)
  const t0 = performance.now()
  let readDone = t0
  let firstWrite: number | undefined
  let result
  try {
    result = await importInto(store, blob, {
      ...(chunkSize && { chunkSize }),
      onProgress: (p) => {
        peak = Math.max(peak, heapUsed() ?? 0)
        if (p.phase === 'read') readDone = performance.now()
        else firstWrite ??= performance.now()
      },
    })
  } finally {
    clearInterval(sampler)
  }
  const ms = performance.now() - t0
  const sessions = result.written.length
  const entries = result.written.reduce((n, w) => n + w.entries, 0)
  result = undefined
  gc?.()
  const after = gc ? heapUsed() ?? 0 : undefined
  await store.close()
  return { ms, readMs: readDone - t0, firstWriteMs: (firstWrite ?? t0) - readDone, sessions, entries, base, peak, after }
}
