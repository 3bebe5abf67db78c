import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright'
import { startServer } from '../../conformance/http-process.js'
import { call, quantile, syncPages } from '../subjects/sync-pages.js'
import { pushMutations, sessionChanges } from '../../support/sync-push.js'
import type { BenchRow, Workload } from '../types.js'

const SESSIONS = 100
const PER_SESSION = 100
const OFFLINE_APPENDS = 1_000
export const UPDATES = 500
export const GAP_MS = 20
export const TOKEN = 'bench-token'

/** The server's data for S1: `SESSIONS` sessions of `PER_SESSION` chained entries, pushed in large batches. */
async function seed(url: string): Promise<void> {
  let id = 0
  let mutations: unknown[] = []
  const send = async (): Promise<void> => {
    await pushMutations(url, 'seed', mutations, { what: 'seed', token: TOKEN })
    mutations = []
  }
  const t = Date.now()
  for (let s = 0; s < SESSIONS; s++) {
    const changes = sessionChanges(`s1-${s}`, `session ${s}`, t, PER_SESSION, (i) => ({
      role: 'user',
      content: [{ type: 'text', text: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(8)}` }],
      timestamp: i,
    }))
    for (const change of changes) mutations.push({ id: ++id, change })
    if (mutations.length >= 900) await send()
  }
  if (mutations.length) await send()
}

/**
 * S3's measure: device A (page `a`, synced to `urlA`) streams `UPDATES` content updates into an
 * assistant message, `GAP_MS` apart; device B (synced to `urlB`) watches the entry. Latency of
 * each revision: from A's `updateMessage` to B's live query first holding it or a later one
 * (pushes coalesce). Also run across two server instances (`s3x-sync.ts`).
 */
export async function streamLatency(
  a: Page,
  b: Page,
  urlA: string,
  urlB: string,
): Promise<{ p50: number; p95: number; seen: number }> {
  await call(a, 'open', urlA, TOKEN)
  await call(b, 'open', urlB, TOKEN)
  const { session_id, entry_id } = await call<{ session_id: string; entry_id: string }>(a, 'createReply')
  await call(b, 'flush')
  await call(b, 'watch', session_id, entry_id)
  const sent = await call<Array<[number, number]>>(a, 'stream', session_id, entry_id, UPDATES, GAP_MS)
  await call(b, 'flush')
  const seen = (await call<Array<[number, number]>>(b, 'arrivals')).sort((x, y) => x[0] - y[0])
  const latencies = sent
    .map(([rev, at]) => {
      const first = seen.filter(([r]) => r >= rev).reduce((m, [, t]) => Math.min(m, t), Infinity)
      return first - at
    })
    .filter(Number.isFinite)
    .sort((x, y) => x - y)
  if (latencies.length !== UPDATES)
    throw new Error(`S3: ${UPDATES - latencies.length} updates never reached device B`)
  return { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), seen: seen.length }
}

/**
 * S1–S3: sync between headless Chromium pages (real IndexedDB) and a real `colloquy-server`
 * process on loopback with its file storage.
 */
const sync: Workload = {
  id: 'S1-S3',
  title: 'sync: initial pull, offline push, device-to-device latency',
  env: 'node',
  async run(ctx) {
    const rows: BenchRow[] = []
    const dataDir = mkdtempSync(join(tmpdir(), 'colloquy-s13-'))
    const server = await startServer([
      '--data-dir',
      join(dataDir, 'data'),
      '--token',
      `bench=${TOKEN}`,
      '--origin',
      '*',
    ])
    let pages: Awaited<ReturnType<typeof syncPages>> | undefined
    try {
      pages = await syncPages()
      const page = (): Promise<Page> => pages!.page()

      // S1: initial pull into an empty store, against writing the same data locally (W2's way).
      await seed(server.url)
      const p1 = await page()
      const s1 = await call<{ ms: number; sessions: number; entries: number; requests: number }>(
        p1,
        's1',
        server.url,
        TOKEN,
      )
      const w2 = await call<{ ms: number }>(p1, 'w2', SESSIONS, PER_SESSION)
      if (s1.entries !== SESSIONS * PER_SESSION)
        throw new Error(`S1: pulled ${s1.entries} entries, expected ${SESSIONS * PER_SESSION}`)
      ctx.log(
        `S1: ${s1.entries} entries in ${s1.ms.toFixed(0)} ms (${s1.requests} pulls); local writes of the same: ${w2.ms.toFixed(0)} ms`,
      )
      rows.push(
        {
          id: 'S1',
          subject: 'core W2 (same data, appends issued at once)',
          metric: 'time',
          value: w2.ms,
          unit: 'ms',
          better: 'lower',
        },
        {
          id: 'S1',
          subject: 'colloquy sync (initial pull)',
          metric: 'time',
          value: s1.ms,
          unit: 'ms',
          better: 'lower',
          baseline: 'core W2 (same data, appends issued at once)',
          target: '<= 2x core W2',
          pass: s1.ms <= 2 * w2.ms,
          note: `${s1.entries} entries over ${s1.sessions} sessions, ${s1.requests} pull requests`,
        },
      )

      // S2: offline appends pushed when sync starts.
      const s2 = await call<{ ms: number; pushes: number; requests: number }>(
        p1,
        's2',
        server.url,
        TOKEN,
        OFFLINE_APPENDS,
      )
      ctx.log(
        `S2: ${OFFLINE_APPENDS} offline appends pushed in ${s2.pushes} push requests (${s2.requests} requests in all), ${s2.ms.toFixed(0)} ms`,
      )
      rows.push(
        {
          id: 'S2',
          subject: 'colloquy sync (push)',
          metric: 'push requests',
          value: s2.pushes,
          unit: 'requests',
          better: 'lower',
          target: '<= 10 requests',
          pass: s2.pushes <= 10,
          note: `${s2.requests} requests in all (pull and push)`,
        },
        {
          id: 'S2',
          subject: 'colloquy sync (push)',
          metric: 'time',
          value: s2.ms,
          unit: 'ms',
          better: 'lower',
          note: `${OFFLINE_APPENDS} appends until the outbox is empty and pulled back`,
        },
      )

      // S3: device A streams updates into a message; when does device B's live query see each?
      const { p50, p95, seen } = await streamLatency(await page(), await page(), server.url, server.url)
      ctx.log(
        `S3: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms over ${UPDATES} updates (${seen} distinct revisions seen on B)`,
      )
      const load = loadavg()[0].toFixed(1)
      rows.push(
        {
          id: 'S3',
          subject: 'colloquy sync (A → server → B)',
          metric: 'latency p50',
          value: p50,
          unit: 'ms',
          better: 'lower',
          note: `${UPDATES} updates ${GAP_MS} ms apart; B saw ${seen} distinct revisions`,
        },
        {
          id: 'S3',
          subject: 'colloquy sync (A → server → B)',
          metric: 'latency p95',
          value: p95,
          unit: 'ms',
          better: 'lower',
          target: '<= 50 ms',
          pass: p95 <= 50,
          note: `1-min load average ${load}`,
        },
      )
    } finally {
      await pages?.close()
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
    return rows
  },
}

export default sync
