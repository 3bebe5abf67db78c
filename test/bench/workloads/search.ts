import { createStore, memoryStorage, type SessionEntry } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { enableSearch, fold } from '@colloquy/core/search'
import type { BenchRow, Workload } from '../types.js'
import { median, now, percentile } from '../subjects/measure.js'
import { rng } from '../subjects/data.js'
import { corpusQueries, corpusSession, entryText as textOf, PER_SESSION } from '../subjects/search-corpus.js'
import { sampleTexts } from '../subjects/search-samples.mjs'

const MESSAGES = Number(process.env.SEARCH_MESSAGES ?? 100_000)
const QUERIES = 200
/** The scan reads every message per query (seconds at 100k): it runs the first of the queries only. */
const SCANNED = 40

/**
 * Full-text search over a corpus built from the real transcripts (each text once per ~60
 * messages, with a session number mixed in so copies differ), in Node on memory storage:
 * indexing what is there, heap, and query latency for 1-3 word and prefix queries beside a
 * brute-force scan of every message in memory (folded text, substring match).
 */
const search: Workload = {
  id: 'SEARCH',
  title: `full-text search, ${MESSAGES / 1000}k messages from the samples (Node, memory storage)`,
  env: 'node',
  async run() {
    const texts = sampleTexts()
    const random = rng(25)
    const store = await createStore({ storage: memoryStorage(), multiTab: false, prefetch: false })
    for (let s = 0; s < MESSAGES / PER_SESSION; s++) {
      const { session_id } = await store.create({ title: `chat ${s}` })
      const messages = corpusSession(texts, random, s)
      await store.appendMany({ session_id, messages })
    }
    const gcOnce = (globalThis as { gc?: () => void }).gc
    // Twice, a task apart: array buffers are freed by a task that follows the collection.
    const gc =
      gcOnce &&
      (async (): Promise<void> => {
        gcOnce()
        await new Promise((resolve) => setImmediate(resolve))
        gcOnce()
      })
    await gc?.()
    // The JS heap and the typed arrays' buffers (outside the heap, where postings are kept).
    const held = (): number => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
    const heap0 = held()
    const t0 = now()
    const index = await enableSearch(store)
    await index.query({ query: 'warmup' })
    const indexMs = now() - t0
    await gc?.()
    const heap1 = held()

    const queries = corpusQueries(texts, random, QUERIES)
    const host = hostOf(store)
    const all: SessionEntry[] = []
    for (const h of host.heads()) for (const e of host.entries(h.meta.session_id)!.values()) all.push(e)
    const scan = (q: { query: string }): number => {
      const terms = fold(q.query).split(' ')
      let n = 0
      for (const e of all) {
        const t = fold(textOf(e))
        if (terms.every((w) => t.includes(w))) n++
      }
      return n
    }
    const timed = async (
      f: (q: { query: string; prefix: boolean }) => unknown,
      n = QUERIES,
    ): Promise<number[]> => {
      const out: number[] = []
      for (const q of queries.slice(0, n)) {
        const t = now()
        await f(q)
        out.push(now() - t)
      }
      return out
    }
    await timed((q) => index.query({ ...q, limit: 20 }))
    const own = await timed((q) => index.query({ ...q, limit: 20 }))
    const brute = await timed(scan, SCANNED)
    index.close()
    await store.close()
    const row = (
      subject: string,
      metric: string,
      value: number,
      unit: string,
      note: string,
      more: Partial<BenchRow> = {},
    ): BenchRow => ({
      id: 'SEARCH',
      subject,
      metric,
      value,
      unit,
      better: 'lower',
      note,
      ...more,
    })
    const note = `${QUERIES} queries (1-3 words, every fourth a 3-letter prefix), 20 hits with snippets`
    return [
      row(
        'colloquy search',
        'index existing messages',
        MESSAGES / (indexMs / 1000),
        'msg/s',
        `${MESSAGES} messages in ${MESSAGES / PER_SESSION} sessions, ${indexMs.toFixed(0)} ms`,
        { better: 'higher', target: '>= 10000 msg/s', pass: MESSAGES / (indexMs / 1000) >= 10_000 },
      ),
      row(
        'colloquy search',
        'index heap',
        (heap1 - heap0) / 1e6,
        'MB',
        `heap and array buffers, ${gc ? 'after gc' : 'without --expose-gc: coarse'}`,
        { target: '<= 64 MB', pass: heap1 - heap0 <= 64e6 },
      ),
      row('colloquy search', 'query p50', median(own), 'ms', note),
      row('colloquy search', 'query p95', percentile(own, 95), 'ms', note, {
        target: '<= 30 ms',
        pass: percentile(own, 95) <= 30,
      }),
      row(
        'brute-force scan',
        'query p50',
        median(brute),
        'ms',
        `every message folded and searched, in memory; the first ${SCANNED} queries`,
        { baseline: 'colloquy search' },
      ),
      row(
        'brute-force scan',
        'query p95',
        percentile(brute, 95),
        'ms',
        `every message folded and searched, in memory; the first ${SCANNED} queries`,
        { baseline: 'colloquy search' },
      ),
    ]
  },
}

export default search
