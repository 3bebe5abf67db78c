import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createStore, memoryStorage, type AgentMessage, type SessionEntry } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { enableSearch, fold } from '@colloquy/core/search'
import type { BenchRow, Workload } from '../types.js'
import { median, now, percentile } from '../subjects/measure.js'
import { rng } from '../subjects/data.js'

/** The real transcripts: `shared/samples` beside the checkout (`../shared` of the main one, `../../shared` of a worktree). */
function samplesDir(): string {
  for (let dir = process.cwd(); dir !== dirname(dir); dir = dirname(dir)) {
    const p = join(dir, 'shared', 'samples')
    if (existsSync(p)) return p
  }
  throw new Error('no shared/samples above the working directory')
}
const MESSAGES = Number(process.env.SEARCH_MESSAGES ?? 100_000)
const PER_SESSION = 100
const QUERIES = 200
/** The scan reads every message per query (seconds at 100k): it runs the first of the queries only. */
const SCANNED = 40

/** Every string of 20+ characters with a space in the sample transcripts: what people and models wrote. */
function sampleTexts(): string[] {
  const out = new Set<string>()
  const strings = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v.length >= 20 && v.length < 20_000 && v.includes(' ')) out.add(v)
    } else if (Array.isArray(v)) v.forEach(strings)
    else if (v && typeof v === 'object') Object.values(v).forEach(strings)
  }
  const walk = (dir: string): void => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f)
      if (statSync(p).isDirectory()) walk(p)
      else if (f.endsWith('.jsonl'))
        for (const line of readFileSync(p, 'utf8').split('\n')) {
          try {
            if (line.trim()) strings(JSON.parse(line))
          } catch {
            // a truncated sample line
          }
        }
      else if (f.endsWith('.json')) strings(JSON.parse(readFileSync(p, 'utf8')))
    }
  }
  walk(samplesDir())
  return [...out]
}

const textOf = (e: SessionEntry): string =>
  e.kind === 'message' ? e.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') : ''

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
      const messages: AgentMessage[] = []
      for (let i = 0; i < PER_SESSION; i++) {
        // Flat, as a message read from storage or the network is (a template literal is a rope,
        // which the first regular expression to read it flattens into a copy: the store's text
        // would be counted as the index's memory).
        const text = JSON.parse(
          JSON.stringify(`${texts[Math.floor(random() * texts.length)]} ref${s}x${i % 7}`),
        )
        messages.push(
          i % 2
            ? {
                role: 'assistant',
                content: [{ type: 'text', text }],
                timestamp: s * 1000 + i,
                stop_reason: 'end',
                model: 'm',
                provider: 'p',
              }
            : { role: 'user', content: [{ type: 'text', text }], timestamp: s * 1000 + i },
        )
      }
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

    // Queries: 1-3 words of 4+ letters from random texts, every fourth a 3-letter prefix.
    const queries: { query: string; prefix: boolean }[] = []
    while (queries.length < QUERIES) {
      const words = texts[Math.floor(random() * texts.length)].toLowerCase().match(/[a-z]{4,}/g)
      if (!words || words.length < 3) continue
      const k = queries.length % 4
      const at = Math.floor(random() * (words.length - 2))
      queries.push(
        k === 3
          ? { query: words[at].slice(0, 3), prefix: true }
          : { query: words.slice(at, at + k + 1).join(' '), prefix: false },
      )
    }
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
