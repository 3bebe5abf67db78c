import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPostgres, type TestCluster } from '../../support/postgres.js'
import { newSessionMeta, pushMutations, sessionChanges } from '../../support/sync-push.js'
import type { BenchRow, Workload } from '../types.js'
import { repoRoot, spawnServer } from './s4-server.js'

/** The data size: `S5_ENTRIES` (default 1,000,000), 100 entries per session. */
export const ENTRIES = Number(process.env.S5_ENTRIES ?? 1_000_000)
export const PER_SESSION = 100
const BATCH = 800
const LOADERS = 4
/** `S5_STORAGES=postgres` or `file` runs one storage only (default both, PostgreSQL first). */
const STORAGES = (process.env.S5_STORAGES ?? 'postgres,file')
  .split(',')
  .filter((s): s is 'postgres' | 'file' => s === 'postgres' || s === 'file')
const MB = 1024 * 1024

interface Server {
  url: string
  child: ChildProcess
  /** ms from spawn to the "listening" line. */
  startMs: number
}

export const start = (root: string, storage: readonly string[]): Promise<Server> =>
  spawnServer(root, 'S5', storage, 600_000)

export const stop = (s: Server): Promise<void> =>
  new Promise((resolve) => {
    if (s.child.exitCode !== null) return resolve()
    s.child.once('exit', () => resolve())
    s.child.kill('SIGTERM')
  })

/** Resident and peak resident memory of a process, in MiB (Linux). */
export function memory(pid: number | undefined): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

const text = (s: number, i: number): string =>
  `session ${s} message ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(5)}`

/** S5's session `s` as a client pushes it: meta, 100 chained entries, the leaf. */
export function sessionOf(s: number): { sid: string; changes: unknown[] } {
  const t = 1_700_000_000_000 + s
  const sid = `s5-${s}`
  const changes = sessionChanges(sid, `session ${s}`, t, PER_SESSION, (i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: [{ type: 'text', text: text(s, i) }],
    timestamp: t + i,
    ...(i % 2 ? { model: 'm', provider: 'p', stop_reason: 'end' } : {}),
  }))
  return { sid, changes }
}

/** Every session as a client pushes it: meta, 100 chained entries, the leaf; in batches of about 1,000 mutations. */
export async function load(
  url: string,
  pid: number | undefined,
  log: (line: string) => void,
): Promise<number> {
  const sessions = Math.ceil(ENTRIES / PER_SESSION)
  let next = 0
  const t0 = performance.now()
  // Progress every tenth, so a rate that falls as the data grows shows in the log.
  const tenth = Math.max(1, Math.floor(sessions / 10))
  let mark = t0
  const loader = async (): Promise<void> => {
    let mutations: unknown[] = []
    const send = async (): Promise<void> => {
      await pushMutations(url, 's5', mutations, { what: 'S5 load' })
      mutations = []
    }
    for (let s = next++; s < sessions; s = next++) {
      const { changes } = sessionOf(s)
      for (const change of changes) mutations.push({ id: mutations.length, change })
      if (mutations.length >= BATCH) await send()
      if ((s + 1) % tenth === 0) {
        const at = performance.now()
        log(
          `  ${((s + 1) * PER_SESSION).toLocaleString('en-US')} entries pushed, ${((tenth * PER_SESSION) / ((at - mark) / 1000)).toFixed(0)} entries/s over the last tenth, server RSS ${memory(pid).rss.toFixed(0)} MiB`,
        )
        mark = at
      }
    }
    if (mutations.length) await send()
  }
  await Promise.all(Array.from({ length: LOADERS }, loader))
  return performance.now() - t0
}

/** Pulls the whole log from 0 in pages of 5,000; changes per second. */
async function pullAll(url: string): Promise<{ changes: number; ms: number }> {
  let since = 0
  let changes = 0
  const t0 = performance.now()
  for (;;) {
    const res = await fetch(`${url}/sync/pull?since=${since}&limit=5000`)
    if (!res.ok) throw new Error(`S5 pull: HTTP ${res.status}`)
    const page = (await res.json()) as { changes: unknown[]; checkpoint: number; more: boolean }
    changes += page.changes.length
    since = page.checkpoint
    if (!page.more) break
  }
  return { changes, ms: performance.now() - t0 }
}

/**
 * S5: the server at scale. `S5_ENTRIES` entries (default 1,000,000, in sessions of 100) pushed
 * through the API, then the server restarted: its start time, its memory, and how fast the whole
 * log pulls from 0. For the file storage (one process, everything in memory) and PostgreSQL (a
 * bounded cache; the data stays in the database).
 */
const s5: Workload = {
  id: 'S5',
  title: `server at scale: ${ENTRIES.toLocaleString('en-US')} entries, file storage and PostgreSQL`,
  env: 'node',
  async run(ctx) {
    const root = repoRoot()
    const rows: BenchRow[] = []
    const cluster = await startPostgres({ durable: true })
    try {
      for (const storage of STORAGES) {
        const dir = mkdtempSync(join(tmpdir(), 'colloquy-s5-'))
        const args =
          storage === 'file'
            ? ['--data-dir', join(dir, 'data')]
            : ['--postgres', await cluster.createDatabase()]
        const subject = storage === 'file' ? 'file storage' : 'postgres'
        try {
          let server = await start(root, args)
          const loadMs = await load(server.url, server.child.pid, ctx.log)
          const loaded = memory(server.child.pid)
          ctx.log(
            `${subject}: loaded ${ENTRIES} entries in ${(loadMs / 1000).toFixed(1)} s, RSS ${loaded.rss.toFixed(0)} MiB (peak ${loaded.peak.toFixed(0)})`,
          )
          await stop(server)
          server = await start(root, args)
          const started = memory(server.child.pid)
          const pulled = await pullAll(server.url)
          const after = memory(server.child.pid)
          await stop(server)
          const busy = loadavg()[0].toFixed(1)
          ctx.log(
            `${subject}: start ${server.startMs.toFixed(0)} ms, RSS ${started.rss.toFixed(0)} MiB; pull ${pulled.changes} changes in ${(pulled.ms / 1000).toFixed(1)} s, RSS ${after.rss.toFixed(0)} MiB (peak ${after.peak.toFixed(0)}); load ${busy}`,
          )
          const base = storage === 'postgres' ? { baseline: 'file storage' } : {}
          const note = `${ENTRIES.toLocaleString('en-US')} entries in ${Math.ceil(ENTRIES / PER_SESSION).toLocaleString('en-US')} sessions, loaded through POST /sync/push by ${LOADERS} clients in ${(loadMs / 1000).toFixed(0)} s; 1-min load average ${busy}`
          const pg = storage === 'postgres'
          rows.push(
            {
              id: 'S5',
              subject,
              metric: 'start time',
              value: server.startMs,
              unit: 'ms',
              better: 'lower',
              ...base,
              ...(pg && { target: '<= 2000 ms at 1M entries', pass: server.startMs <= 2000 }),
              note,
            },
            {
              id: 'S5',
              subject,
              metric: 'RSS after start',
              value: started.rss,
              unit: 'MiB',
              better: 'lower',
              ...base,
            },
            {
              id: 'S5',
              subject,
              metric: 'peak RSS while loading',
              value: loaded.peak,
              unit: 'MiB',
              better: 'lower',
              ...base,
              ...(pg && { target: '<= 300 MB', pass: loaded.peak * MB <= 300e6 }),
            },
            {
              id: 'S5',
              subject,
              metric: 'peak RSS after a full pull',
              value: after.peak,
              unit: 'MiB',
              better: 'lower',
              ...base,
              ...(pg && { target: '<= 300 MB', pass: after.peak * MB <= 300e6 }),
            },
            {
              id: 'S5',
              subject,
              metric: 'pull from 0',
              value: pulled.changes / (pulled.ms / 1000),
              unit: 'changes/s',
              better: 'higher',
              ...base,
              note: `${pulled.changes.toLocaleString('en-US')} changes in pages of 5,000`,
            },
          )
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    } finally {
      cluster.stop()
    }
    return rows
  },
}

/** The part of `ws`'s client this workload uses. */
interface WebSocketClient {
  on(event: 'message', listener: (data: { toString(): string }) => void): void
  once(event: 'open' | 'error', listener: (arg?: unknown) => void): void
  close(): void
}

/**
 * S3 across instances: device A pushes an append to instance 1, device B follows the live stream
 * of instance 2 (both on one PostgreSQL database); the time from A's push to B receiving it,
 * 200 appends 20 ms apart.
 */
const s3x: Workload = {
  id: 'S3x',
  title: 'live latency across two server instances on PostgreSQL',
  env: 'node',
  async run(ctx) {
    const root = repoRoot()
    const WS = createRequire(join(root, 'packages/server/package.json'))('ws') as new (
      url: string,
    ) => WebSocketClient
    let cluster: TestCluster | undefined
    const servers: Server[] = []
    try {
      cluster = await startPostgres({ durable: true })
      const db = await cluster.createDatabase()
      for (let i = 0; i < 2; i++) servers.push(await start(root, ['--postgres', db]))
      const [one, two] = servers
      const t = Date.now()
      const push = (mutations: unknown[]): Promise<void> =>
        pushMutations(one.url, 'a', mutations, { what: 'S3x' })
      await push([{ id: 0, change: newSessionMeta('x', 'x', t) }])
      const sent = new Map<string, number>()
      const latencies: number[] = []
      const ws = new WS(`${two.url.replace(/^http/, 'ws')}/sync/stream?since=0`)
      ws.on('message', (data) => {
        const m = JSON.parse(data.toString()) as {
          type: string
          changes?: Array<{ change: { type: string; entry?: { id: string } } }>
        }
        for (const c of m.changes ?? []) {
          const at = c.change.entry && sent.get(c.change.entry.id)
          if (at !== undefined) {
            latencies.push(performance.now() - at)
            sent.delete(c.change.entry!.id)
          }
        }
      })
      await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)))
      const N = 200
      for (let i = 0; i < N; i++) {
        const id = `e${i}`
        sent.set(id, performance.now())
        await push([
          {
            id: 1,
            change: {
              type: 'entry',
              session_id: 'x',
              base_revision: null,
              entry: {
                id,
                parent_id: i ? `e${i - 1}` : null,
                timestamp: t + i,
                revision: 0,
                kind: 'message',
                message: { role: 'user', content: [{ type: 'text', text: `m${i}` }], timestamp: t },
              },
            },
          },
        ])
        await new Promise((r) => setTimeout(r, 20))
      }
      const until = Date.now() + 5000
      while (latencies.length < N && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
      ws.close()
      latencies.sort((a, b) => a - b)
      const q = (p: number): number =>
        latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]
      const load = loadavg()[0].toFixed(1)
      ctx.log(
        `S3x: ${latencies.length}/${N} received on instance 2, p50 ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms, load ${load}`,
      )
      return [
        {
          id: 'S3x',
          subject: 'postgres, 2 instances',
          metric: 'push on 1 → stream on 2, p95',
          value: q(0.95),
          unit: 'ms',
          better: 'lower',
          target: '<= 50 ms',
          pass: q(0.95) <= 50 && latencies.length === N,
          note: `${latencies.length}/${N} appends received; p50 ${q(0.5).toFixed(1)} ms; NOTIFY delivered at COMMIT, one reader per instance reading in one statement; 1-min load average ${load}`,
        },
      ]
    } finally {
      for (const s of servers) s.child.kill('SIGKILL')
      cluster?.stop()
    }
  },
}

export default [s5, s3x]
