import { createStore, indexedDbStorage, type AgentMessage, type Store } from '@colloquy/core'
import { createThread } from '@colloquy/parts'
import type { BenchContext, BenchRow } from '../types.js'
import { median } from './measure.js'

// R3: what the framework adapters cost while streaming. Each subject renders a 1,000-message
// thread with the framework's own runtime, streams 1,000 chunks into the last message, and
// waits for each chunk to be on screen (committed by React) before sending the next.

export const R3_MESSAGES = 1000
export const R3_CHUNKS = 1000
export const R3_ROUNDS = 3

/** Row renders, and the moment the streaming row shows a given text. */
export const r3 = {
  renders: 0,
  want: '' as string,
  resolve: null as (() => void) | null,
  /** Called by the streaming row in a layout effect with the text it just committed. */
  shown(text: string): void {
    if (this.resolve && text === this.want) {
      const r = this.resolve
      this.resolve = null
      r()
    }
  },
  /** Resolves once the streaming row has committed `text`. */
  until(text: string): Promise<void> {
    this.want = text
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`chunk not shown within 10 s (${text.length} chars)`)),
        10_000,
      )
      this.resolve = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  },
}

/** The text after `i + 1` chunks. */
export const chunkText = (i: number): string => Array.from({ length: i + 1 }, (_, k) => `tok${k} `).join('')

export interface R3Pass {
  wallMs: number
  renders: number
}

/** The thread before a pass: 998 messages, user and assistant in turn; the pass adds the last two. */
export const r3History = (): AgentMessage[] =>
  Array.from({ length: R3_MESSAGES - 2 }, (_, i) =>
    i % 2 === 0
      ? { role: 'user', content: [{ type: 'text', text: `question ${i}` }], timestamp: i }
      : {
          role: 'assistant',
          content: [{ type: 'text', text: `answer ${i}` }],
          stop_reason: 'end',
          model: 'm',
          provider: 'p',
          timestamp: i,
        },
  )

/** The same history for a framework's in-memory state: ids m0, m1, …, role and text. */
export const r3Texts = (): Array<{ id: string; role: 'user' | 'assistant'; text: string }> =>
  r3History().map((m, i) => ({
    id: `m${i}`,
    role: m.role === 'user' ? 'user' : 'assistant',
    text: (m.content[0] as { text: string }).text,
  }))

/** A store on a fresh database (named under `db`) holding one thread with the history. */
export async function r3Store(ctx: BenchContext, db: string): Promise<{ store: Store; session_id: string }> {
  const store = await createStore({ storage: indexedDbStorage({ name: ctx.dbName(db) }) })
  const session_id = await createThread(store)
  await store.appendMany({ session_id, messages: r3History() })
  return { store, session_id }
}

/** Resolves when `check` passes, polling every 10 ms; fails after a minute of mounting `what`. */
export async function mounting(what: string, check: () => boolean): Promise<void> {
  const end = performance.now() + 60_000
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out mounting ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** One measured pass: row renders and wall time from sending the question until `send` resolves (the reply streamed). */
export async function timedPass(send: () => Promise<unknown>): Promise<R3Pass> {
  r3.renders = 0
  const started = performance.now()
  await send()
  const wallMs = performance.now() - started
  return { wallMs, renders: r3.renders }
}

export async function measureR3<S extends string>(
  subjects: Record<S, (chunks: number) => Promise<R3Pass>>,
  log: (m: string) => void,
  rounds = R3_ROUNDS,
): Promise<Record<S, { wallMs: number; rendersPerChunk: number; walls: number[] }>> {
  const names = Object.keys(subjects) as S[]
  for (const s of names) await subjects[s](Math.ceil(R3_CHUNKS / 20)) // warm-up
  const runs = new Map<S, R3Pass[]>(names.map((s) => [s, []]))
  for (let r = 0; r < rounds; r++) {
    const order = [...names.slice(r % names.length), ...names.slice(0, r % names.length)]
    for (const s of order) {
      const p = await subjects[s](R3_CHUNKS)
      runs.get(s)!.push(p)
      log(
        `  R3 ${s} round ${r + 1}/${rounds}: ${p.wallMs.toFixed(0)} ms, ${(p.renders / R3_CHUNKS).toFixed(2)} row renders/chunk`,
      )
    }
  }
  const out = {} as Record<S, { wallMs: number; rendersPerChunk: number; walls: number[] }>
  for (const s of names) {
    const ps = runs.get(s)!
    out[s] = {
      wallMs: median(ps.map((p) => p.wallMs)),
      rendersPerChunk: median(ps.map((p) => p.renders / R3_CHUNKS)),
      walls: ps.map((p) => p.wallMs),
    }
  }
  return out
}

/** Rows for one framework: the Colloquy adapter against the framework's own in-memory state. */
export function r3Rows(
  framework: string,
  colloquy: string,
  baseline: string,
  runs: Record<string, { wallMs: number; rendersPerChunk: number; walls: number[] }>,
  note: string,
  rounds = R3_ROUNDS,
): BenchRow[] {
  const c = runs[colloquy]
  const b = runs[baseline]
  const size = `${R3_CHUNKS.toLocaleString('en-US')} chunks into the last of ${R3_MESSAGES.toLocaleString('en-US')} messages, each on screen before the next; ${rounds === 1 ? 'one round' : `median of ${rounds}`}`
  return [
    {
      id: 'R3',
      subject: colloquy,
      metric: 'wall time',
      value: c.wallMs,
      unit: 'ms',
      baseline,
      better: 'lower',
      note: `${framework}: ${size}; ${note}`,
    },
    {
      id: 'R3',
      subject: baseline,
      metric: 'wall time',
      value: b.wallMs,
      unit: 'ms',
      better: 'lower',
      note: `${framework}'s default in-memory state, the same UI`,
    },
    {
      id: 'R3',
      subject: colloquy,
      metric: 'ms per chunk',
      value: c.wallMs / R3_CHUNKS,
      unit: 'ms',
      baseline,
      better: 'lower',
    },
    {
      id: 'R3',
      subject: baseline,
      metric: 'ms per chunk',
      value: b.wallMs / R3_CHUNKS,
      unit: 'ms',
      better: 'lower',
    },
    {
      id: 'R3',
      subject: colloquy,
      metric: 'row renders per chunk',
      value: c.rendersPerChunk,
      unit: 'renders',
      baseline,
      better: 'lower',
      target: 'only the streaming message (≈1)',
      pass: c.rendersPerChunk <= 1.1,
    },
    {
      id: 'R3',
      subject: baseline,
      metric: 'row renders per chunk',
      value: b.rendersPerChunk,
      unit: 'renders',
      better: 'lower',
    },
  ]
}
