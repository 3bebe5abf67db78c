import { createStore, indexedDbStorage, type SessionImport } from '@colloquy/core'
import { importInto, importTranscript } from '../../../packages/formats/src/index.js'
import type { BenchContext } from '../types.js'
import { rawImport } from './raw-import.js'

// What the import workloads (F1, F2) share: generated texts and one measured import per subject.

/** Filler text of `n` characters from `words`, varied by `seed`. */
export function prose(words: readonly string[], n: number, seed: number): string {
  let s = ''
  for (let i = 0; s.length < n; i++) s += `${words[(seed + i * 7) % words.length]} `
  return s.slice(0, n)
}

const heapUsed = (): number | undefined =>
  (performance as Performance & { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize

export interface ImportRun {
  /** The whole import, in ms. */
  ms: number
  /** From the start until the file was read and parsed. */
  readMs: number
  /** From the end of reading until the first chunk was on disk (importInto only). */
  firstWriteMs: number
  /** The write phase alone: from sessions in memory to all of them on disk (raw and `write` subjects). */
  writeMs: number
  sessions: number
  entries: number
  /** usedJSHeapSize before the import, the peak sampled every 5 ms during it, and (with gc) after it. */
  base: number
  peak: number
  after: number | undefined
}

/** How an import is made: Colloquy's `importInto`, the raw IndexedDB baseline (one transaction, or 2000 entries each), or Colloquy's write phase alone. */
export type ImportSubject = 'colloquy' | 'raw idb' | 'raw idb chunked' | 'colloquy write'

/** The heap sampled every 5 ms (and at every `mark`) while `fn` runs, after a gc when the page may call it. */
async function sampled<T>(
  fn: (mark: () => void) => Promise<T>,
): Promise<{ value: T; base: number; peak: number; after: number | undefined }> {
  // Only when Chromium runs with --js-flags=--expose-gc: start from a collected heap.
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  let peak = heapUsed() ?? 0
  const base = peak
  const mark = (): void => void (peak = Math.max(peak, heapUsed() ?? 0))
  const sampler = setInterval(mark, 5)
  let value: T
  try {
    value = await fn(mark)
  } finally {
    clearInterval(sampler)
  }
  gc?.()
  return { value, base, peak, after: gc ? (heapUsed() ?? 0) : undefined }
}

/** Imports `blob` into a fresh IndexedDB database named under `db` the way `subject` does. */
export async function measureImport(
  ctx: BenchContext,
  db: string,
  blob: Blob,
  chunkSize?: number,
  subject: ImportSubject = 'colloquy',
): Promise<ImportRun> {
  if (subject === 'raw idb' || subject === 'raw idb chunked') {
    const { value, base, peak, after } = await sampled((mark) =>
      rawImport(ctx.dbName(`${db}-raw`), blob, mark, subject === 'raw idb' ? 0 : 2000),
    )
    return { ...value, firstWriteMs: 0, base, peak, after }
  }
  const store = await createStore({ storage: indexedDbStorage({ name: ctx.dbName(db) }), multiTab: false })
  try {
    const { value, base, peak, after } = await sampled(async (mark) => {
      const t0 = performance.now()
      if (subject === 'colloquy write') {
        // The same parse as the raw baseline, then the sessions through store.importSession.
        const sessions: SessionImport[] = (await importTranscript(blob)).sessions
        const t1 = performance.now()
        let entries = 0
        for (const s of sessions)
          entries += (await store.importSession(s, { ...(chunkSize && { chunkSize }), onProgress: mark }))
            .entries
        const count = sessions.length
        const t2 = performance.now()
        return { ms: t2 - t0, readMs: t1 - t0, firstWriteMs: 0, writeMs: t2 - t1, sessions: count, entries }
      }
      let readDone = t0
      let firstWrite: number | undefined
      const result = await importInto(store, blob, {
        ...(chunkSize && { chunkSize }),
        onProgress: (p) => {
          mark()
          if (p.phase === 'read') readDone = performance.now()
          else firstWrite ??= performance.now()
        },
      })
      const ms = performance.now() - t0
      const sessions = result.written.length
      const entries = result.written.reduce((n, w) => n + w.entries, 0)
      return {
        ms,
        readMs: readDone - t0,
        firstWriteMs: (firstWrite ?? t0) - readDone,
        writeMs: 0,
        sessions,
        entries,
      }
    })
    return { ...value, base, peak, after }
  } finally {
    await store.close()
  }
}
