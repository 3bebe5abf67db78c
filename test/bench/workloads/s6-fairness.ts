import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'undici'
import { startPostgres } from '../../support/postgres.js'
import type { JsonObject } from '@colloquy/core'
import { newSessionMeta } from '../../support/sync-push.js'
import { percentile } from '../subjects/measure.js'
import type { BenchRow, Workload } from '../types.js'
import { repoRoot, spawnServer } from './s4-server.js'

/**
 * S6, fairness: one principal (alice) sends its worst requests, within every limit, from
 * FLOOD_CONCURRENCY connections at once, while another (bob) sends one small request
 * (`session::get` of his own session) every CANARY_EVERY_MS, each awaited. The canary's latency
 * under each kind of load alone and under all of them mixed is compared with the same canary on
 * the idle server. The load runs in a process of its own (`subjects/flood.mjs`), so reading its
 * large answers never delays the canary's timing here. File storage, then PostgreSQL
 * (`S6_POSTGRES=0` skips it, `S6_FILE=0` the file storage). Default limits (request rate included): the load is what a
 * principal may send.
 */
const FLOOD_CONCURRENCY = Number(process.env.S6_CONCURRENCY ?? 4)
const PHASE_MS = Number(process.env.S6_PHASE_MS ?? 4_000)
const CANARY_EVERY_MS = 20
const TARGET_MS = 50
const SESSIONS = 2_000
const LONG_ENTRIES = 3_000
const TITLE_WORDS = 50_000
const TOKENS = { 'tok-alice': 'alice', 'tok-bob': 'bob' }
/** Only the loads whose name holds one of these (comma-separated), e.g. `S6_LOADS=pull,push`. */
const ONLY = process.env.S6_LOADS?.split(',').filter(Boolean)
/** More of Node's options for the server (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`: profiling slows it, report no figure from such a run). */
const SERVER_NODE_ARGS = process.env.S6_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []
/** More of the server's own options (e.g. `S6_SERVER_ARGS='--max-batch 250'` to compare push caps). */
const SERVER_ARGS = process.env.S6_SERVER_ARGS?.split(' ').filter(Boolean) ?? []
/** Mutations in the flood's push: the server's default `maxBatch` (`S6_PUSH_MUTATIONS` with a lower `--max-batch`). */
const PUSH_MUTATIONS = Number(process.env.S6_PUSH_MUTATIONS ?? 1000)

/**
 * The server's longest event-loop block since the last call (`subjects/loop-block.mjs`, preloaded
 * into it): what one request holds the loop for, which the machine's other load barely changes,
 * unlike the canary's latency.
 */
function loopBlocks(child: ChildProcess): () => Promise<{ maxMs: number; maxCpuMs: number }> {
  let out = ''
  const waiting: Array<(v: { maxMs: number; maxCpuMs: number }) => void> = []
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString()
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl)
      out = out.slice(nl + 1)
      if (line.startsWith('loop-block ')) waiting.shift()?.(JSON.parse(line.slice('loop-block '.length)))
    }
  })
  return () => new Promise((resolve) => (waiting.push(resolve), child.kill('SIGUSR2')))
}

interface Flood {
  name: string
  method: 'GET' | 'POST'
  path: string
  body?: string
}

const text = (i: number): string =>
  `message ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(4)}`
const entry = (id: string, parent: string | null, i: number) => ({
  id,
  parent_id: parent,
  timestamp: 1_700_000_000_000 + i,
  revision: 0,
  kind: 'message',
  message: { role: 'user', content: [{ type: 'text', text: text(i) }], timestamp: i },
})
const meta = (session_id: string, title: string, metadata: JsonObject = {}) =>
  newSessionMeta(session_id, title, 1, { metadata })
/** Metadata every one of alice's sessions carries, and her list filter asks for: 500 members compared per session. */
const TAGS = Array.from({ length: 500 }, (_, i) => i)

async function call(
  client: Client,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const res = await client.request({
    path,
    method: method as 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.statusCode, text: await res.body.text() }
}

async function push(client: Client, token: string, changes: unknown[]): Promise<void> {
  for (let i = 0; i < changes.length; i += 200) {
    const r = await call(client, token, 'POST', '/sync/push', {
      client_id: 's6',
      mutations: changes.slice(i, i + 200).map((change, k) => ({ id: i + k, change })),
    })
    if (r.status !== 200) throw new Error(`S6 setup push: ${r.status} ${r.text.slice(0, 200)}`)
  }
}

/** Alice's data (sessions with metadata worth comparing, one 50,000-word title, one long session) and Bob's one session. */
async function seed(client: Client): Promise<void> {
  const words = Array.from({ length: TITLE_WORDS }, (_, i) => `w${i}`)
  const sessions = Array.from({ length: SESSIONS }, (_, i) =>
    meta(`a-${i}`, `Deploy pipeline number ${i} for production`, { tags: TAGS }),
  )
  await push(client, 'tok-alice', [
    ...sessions,
    meta('a-title', words.join(' ')),
    meta('a-long', 'A long conversation'),
  ])
  const long: unknown[] = []
  for (let i = 0; i < LONG_ENTRIES; i++)
    long.push({
      type: 'entry',
      session_id: 'a-long',
      base_revision: null,
      entry: entry(`e${i}`, i === 0 ? null : `e${i - 1}`, i),
    })
  long.push({ type: 'leaf', session_id: 'a-long', entry_id: `e${LONG_ENTRIES - 1}` })
  await push(client, 'tok-alice', long)
  await push(client, 'tok-bob', [meta('b-canary', 'Canary')])
}

/** Alice's worst requests, each within the limits (bodies under 4 MiB, strings under 1 MiB, limits at their maximum). */
function floods(): Flood[] {
  const query = Array.from({ length: TITLE_WORDS }, (_, i) => `w${TITLE_WORDS - 1 - i}`).join(' ')
  const bigPush = {
    client_id: 's6-flood',
    mutations: Array.from({ length: PUSH_MUTATIONS }, (_, i) => ({
      id: i,
      change: {
        type: 'entry',
        session_id: `a-${i % SESSIONS}`,
        base_revision: null,
        entry: entry(`f{{n}}-${i}`, null, i),
      },
    })),
  }
  const sha = 'f'.repeat(64)
  return [
    {
      name: 'mention search (50,000 terms over a 50,000-word title)',
      method: 'POST',
      path: '/rpc/session::mention::search',
      body: JSON.stringify({ query, limit: 50 }),
    },
    {
      name: 'list with a 500-member metadata filter matching 2,000 sessions',
      method: 'POST',
      path: '/rpc/session::list',
      body: JSON.stringify({ metadata: { tags: TAGS }, limit: 1000 }),
    },
    { name: 'pull from 0, limit 5000', method: 'GET', path: '/sync/pull?since=0&limit=5000' },
    {
      name: 'attachment reuse=1 of bytes nobody has',
      method: 'POST',
      path: `/sync/attachments/a-0/x{{n}}?name=x&size=1&sha256=${sha}&created_at=0&reuse=1`,
      body: '',
    },
    {
      name: `push of ${PUSH_MUTATIONS.toLocaleString('en')} new entries (~${Math.round(JSON.stringify(bigPush).length / 1000)} kB)`,
      method: 'POST',
      path: '/sync/push',
      body: JSON.stringify(bigPush),
    },
    { name: 'history of a 3,000-message session', method: 'GET', path: '/sessions/a-long/history' },
    {
      name: 'messages of a 3,000-message session at the largest page (limit 1000, served 500)',
      method: 'POST',
      path: '/rpc/session::messages',
      body: JSON.stringify({ session_id: 'a-long', limit: 1000 }),
    },
  ]
}

/** Runs the flood (or nothing) while the canary sends; returns the canary's latencies and the flood's statistics. */
async function phase(
  url: string,
  canary: Client,
  flood: readonly Flood[] | undefined,
  dir: string,
  blocks: () => Promise<{ maxMs: number; maxCpuMs: number }>,
): Promise<{
  lat: number[]
  block: { maxMs: number; maxCpuMs: number }
  stats?: Record<string, { count: number; statuses: Record<string, number>; maxMs: number }>
}> {
  await blocks()
  let child: ChildProcess | undefined
  let out = ''
  let done: Promise<void> = new Promise((r) => setTimeout(r, PHASE_MS))
  if (flood) {
    const file = join(dir, 'flood.json')
    writeFileSync(file, JSON.stringify(flood))
    // At a lower CPU priority: the load generator's own work (building and reading large bodies)
    // should not be what takes the cores from the server and the canary.
    child = spawn(
      'nice',
      [
        '-n',
        '10',
        process.execPath,
        join(repoRoot(), 'test/bench/subjects/flood.mjs'),
        url,
        'tok-alice',
        file,
        String(FLOOD_CONCURRENCY),
        String(PHASE_MS),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const c = child
    await new Promise<void>((resolve) =>
      c.stdout!.on('data', (d: Buffer) => ((out += d.toString()), out.includes('started') && resolve())),
    )
    done = new Promise((resolve) => c.once('exit', () => resolve()))
  }
  let over = false
  void done.then(() => (over = true))
  const lat: number[] = []
  while (!over) {
    const t = performance.now()
    const r = await call(canary, 'tok-bob', 'POST', '/rpc/session::get', { session_id: 'b-canary' })
    lat.push(performance.now() - t)
    if (r.status !== 200) throw new Error(`S6 canary: ${r.status} ${r.text.slice(0, 200)}`)
    const wait = CANARY_EVERY_MS - (performance.now() - t)
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  }
  await done
  const block = await blocks()
  const last = out.trim().split('\n').pop()
  return { lat, block, stats: flood && last && last !== 'started' ? JSON.parse(last) : undefined }
}

const workload: Workload = {
  id: 'S6',
  title: "Fairness: another principal's canary latency while one principal sends its worst requests",
  env: 'node',
  async run(ctx) {
    const root = repoRoot()
    const rows: BenchRow[] = []
    const dir = mkdtempSync(join(tmpdir(), 'colloquy-s6-'))
    writeFileSync(join(dir, 'tokens.json'), JSON.stringify(TOKENS))
    const cluster = process.env.S6_POSTGRES === '0' ? undefined : await startPostgres({ durable: true })
    try {
      for (const storage of [
        ...(process.env.S6_FILE === '0' ? [] : ['file' as const]),
        ...(cluster ? ['postgres' as const] : []),
      ]) {
        const args =
          storage === 'file'
            ? ['--data-dir', join(dir, 'data')]
            : ['--postgres', await cluster!.createDatabase()]
        const nodeArgs = ['--import', join(root, 'test/bench/subjects/loop-block.mjs'), ...SERVER_NODE_ARGS]
        const { url, child } = await spawnServer(
          root,
          'S6',
          [...args, '--tokens-file', join(dir, 'tokens.json'), ...SERVER_ARGS],
          30_000,
          nodeArgs,
        )
        const blocks = loopBlocks(child)
        const client = new Client(url, { pipelining: 0 })
        const canary = new Client(url, { pipelining: 0 })
        const subject = storage === 'file' ? 'colloquy-server (file)' : 'colloquy-server (postgres)'
        try {
          ctx.log(`S6 ${storage}: seeding`)
          await seed(client)
          const idle = await phase(url, canary, undefined, dir, blocks)
          const row = (
            load: string,
            { lat, block }: { lat: number[]; block: { maxMs: number; maxCpuMs: number } },
            note: string,
            target: boolean,
          ): BenchRow => {
            const p99 = percentile(lat, 99)
            return {
              id: 'S6',
              subject: `${subject}: ${load}`,
              metric: 'canary p99',
              value: Math.round(p99 * 10) / 10,
              unit: 'ms',
              better: 'lower',
              ...(target && { target: `<= ${TARGET_MS} ms`, pass: p99 <= TARGET_MS }),
              note: `canary p50 ${percentile(lat, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms over ${lat.length} requests (idle: p50 ${percentile(idle.lat, 50).toFixed(1)}, p99 ${percentile(idle.lat, 99).toFixed(1)} ms); longest event-loop block ${block.maxMs} ms (${block.maxCpuMs} ms of CPU); ${note}; load average ${loadavg()[0].toFixed(1)}`,
            }
          }
          rows.push(row('idle', idle, 'no load', false))
          // The control: the same 4 connections sending alice's cheapest request (no scan). What
          // the canary loses here is the machine's cores shared with the load, not the event loop.
          ctx.log(`S6 ${storage}: control`)
          const control = await phase(
            url,
            canary,
            [
              {
                name: 'session::get (control: no scan)',
                method: 'POST',
                path: '/rpc/session::get',
                body: JSON.stringify({ session_id: 'a-0' }),
              },
            ],
            dir,
            blocks,
          )
          rows.push(
            row(
              'control: session::get, no scan',
              control,
              `${FLOOD_CONCURRENCY} connections of alice: ${JSON.stringify(control.stats)}`,
              false,
            ),
          )
          const all = floods().filter((f) => !ONLY || ONLY.some((o) => f.name.includes(o)))
          for (const f of all) {
            ctx.log(`S6 ${storage}: ${f.name}`)
            const r = await phase(url, canary, [f], dir, blocks)
            rows.push(
              row(f.name, r, `${FLOOD_CONCURRENCY} connections of alice: ${JSON.stringify(r.stats)}`, true),
            )
          }
          ctx.log(`S6 ${storage}: all of them mixed`)
          const mixed = await phase(url, canary, all, dir, blocks)
          rows.push(
            row(
              'all of them mixed',
              mixed,
              `${FLOOD_CONCURRENCY} connections of alice taking the requests in turn: ${JSON.stringify(mixed.stats)}`,
              true,
            ),
          )
        } finally {
          await client.close()
          await canary.close()
          child.kill('SIGTERM')
          await new Promise((r) => child.once('exit', r))
        }
      }
    } finally {
      await cluster?.stop()
      rmSync(dir, { recursive: true, force: true })
    }
    return rows
  },
}

export default workload
