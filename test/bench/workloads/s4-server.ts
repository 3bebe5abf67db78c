import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from 'undici'
import { startPostgres } from '../../support/postgres.js'
import type { BenchRow, Workload } from '../types.js'
import { Keyring, sealEntry, sealMeta } from '../../../packages/core/src/crypto/index.js'

const CLIENTS = 50
const WARMUP_MS = 1_500
const MEASURE_MS = 5_000
const TARGET = 10_000
/** Which client each transport's rows were measured with (said in every row's note). */
const CLIENT_NOTE = {
  websocket: "ws, push messages on each client's live stream",
  http: "Node's http.request on a keep-alive Agent per client",
  'http-undici': "undici's Client, one keep-alive connection per client (undiciClient)",
} as const

/** The part of `ws`'s client this workload uses (`ws` is the server package's dependency). */
interface WebSocketClient {
  on(event: 'message', listener: (data: { toString(): string }) => void): void
  once(event: 'open' | 'error', listener: (arg?: unknown) => void): void
  send(data: string): void
  close(): void
}
type WebSocketClass = new (url: string, options?: { headers?: Record<string, string> }) => WebSocketClient

/** The repository root, found from wherever the runner put this bundle. */
export function repoRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir
    if (dirname(dir) === dir) throw new Error('S4: repository root not found')
  }
}

/** Starts the built `colloquy-server` on a free loopback port over the given storage (`--data-dir …` / `--postgres …`). */
/**
 * Spawns the built `colloquy-server` with `args` and waits for its "listening" line; `startMs` is
 * the time from spawn to that line (`nodeArgs`: Node's own options, before the script). Shared by
 * the server workloads.
 */
export async function spawnServer(
  root: string,
  label: string,
  args: readonly string[],
  timeoutMs: number,
  nodeArgs: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess; startMs: number }> {
  const cli = join(root, 'packages/server/dist/cli.js')
  if (!existsSync(cli)) throw new Error(`${label}: ${cli} is missing (pnpm build)`)
  const t0 = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, cli, '--host', '127.0.0.1', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: server did not start: ${out}`)), timeoutMs)
    const read = (d: Buffer): void => {
      out += d.toString()
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    }
    child.stdout!.on('data', read)
    child.stderr!.on('data', read)
    child.once(
      'exit',
      (code) => (clearTimeout(timer), reject(new Error(`${label}: server exited (${code}): ${out}`))),
    )
  })
  return { url, child, startMs: performance.now() - t0 }
}

export async function startServer(
  root: string,
  storage: readonly string[],
  tokensFile?: string,
): Promise<{ url: string; child: ChildProcess }> {
  const extra = process.env.S4_SERVER_ARGS?.split(' ').filter(Boolean) ?? []
  // Throughput is measured without the per-principal request rate (a policy, not a cost).
  const { url, child } = await spawnServer(
    root,
    'S4',
    [
      ...storage,
      ...(tokensFile ? ['--tokens-file', tokensFile] : []),
      '--requests-per-second',
      '0',
      ...extra,
    ],
    15_000,
    process.env.S4_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
  )
  return { url, child }
}

const message = (i: number) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text: `message ${i}: the quick brown fox jumps over the lazy dog` }],
  timestamp: i,
})

/**
 * `S4_SEALED=1`: clients push end-to-end encrypted sessions (docs/encryption.md): sealed metas,
 * and entries whose content is a box. The server never opens a box, so every append carries the
 * box of one message sealed once at start (its real size): the server's work is that of a real
 * sealed append, and the clients spend no CPU sealing inside the measured window.
 * `S4_SEALED=both`: each storage and transport in clear, then sealed, on fresh servers in one
 * run; the sealed rows name the clear ones as their baseline (the ratio the issue asks about).
 */
let sealing: { ring: Keyring; box: string } | undefined
async function startSealing(): Promise<{ ring: Keyring; box: string }> {
  const ring = await Keyring.create({ passphrase: 'S4 bench' })
  const sample = {
    id: 'e0',
    parent_id: null,
    timestamp: 0,
    revision: 0,
    kind: 'message' as const,
    message: message(0),
  }
  return { ring, box: (await sealEntry(ring, 's4', sample)).box }
}

/** One chat append as a client pushes it: the new entry (explicit id and parent) and the leaf move. */
function appendMutations(session_id: string, i: number, id: number) {
  const base = { id: `e${i}`, parent_id: i === 0 ? null : `e${i - 1}`, timestamp: Date.now(), revision: 0 }
  const entry = sealing
    ? { ...base, kind: 'message', role: 'user', box: sealing.box }
    : { ...base, kind: 'message', message: message(i) }
  return [
    { id, change: { type: 'entry', session_id, entry, base_revision: null } },
    { id: id + 1, change: { type: 'leaf', session_id, entry_id: entry.id } },
  ]
}

const sessionMeta = (session_id: string) => ({
  id: 0,
  change: {
    type: 'meta',
    create: true,
    meta: {
      session_id,
      title: session_id,
      description: '',
      status: 'idle',
      kind: 'user',
      created_at: Date.now(),
      updated_at: Date.now(),
      message_count: 0,
    },
  },
})

type Push = (mutations: unknown[]) => Promise<Array<{ status: string }>>

/**
 * HTTP: `POST /sync/push`, one request per append, on a keep-alive connection of its own.
 * Node's http client rather than fetch: the load generator shares the machine with the server,
 * and fetch spends several times more CPU per request than the server does.
 */
function httpClient(url: string, token: string): { push: Push; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const { hostname, port } = new URL(url)
  return {
    push(mutations) {
      const body = JSON.stringify({ client_id: 's4', mutations })
      return new Promise((resolve, reject) => {
        const headers = {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${token}`,
        }
        const req = request(
          { host: hostname, port, path: '/sync/push', method: 'POST', agent, headers },
          (res) => {
            const chunks: Buffer[] = []
            res.on('data', (c: Buffer) => chunks.push(c))
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString()
              if (res.statusCode !== 200) reject(new Error(`push: HTTP ${res.statusCode} ${text}`))
              else resolve((JSON.parse(text) as { results: Array<{ status: string }> }).results)
            })
          },
        )
        req.on('error', reject)
        req.end(body)
      })
    },
    close: () => agent.destroy(),
  }
}

/**
 * HTTP, the same requests from undici's `Client` (the HTTP/1.1 client Node's own fetch is built
 * on, used directly): one keep-alive connection per client, one request in flight on it. The
 * server does exactly the same work per push as for `httpClient`; the load generator, which
 * shares the two cores with the server, spends a fraction of Node's http client's CPU per
 * request, so this row measures the server with less interference.
 */
function undiciClient(url: string, token: string): { push: Push; close(): void } {
  const client = new Client(new URL(url).origin, { pipelining: 1 })
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` }
  return {
    async push(mutations) {
      const res = await client.request({
        path: '/sync/push',
        method: 'POST',
        headers,
        body: JSON.stringify({ client_id: 's4', mutations }),
      })
      const text = await res.body.text()
      if (res.statusCode !== 200) throw new Error(`push: HTTP ${res.statusCode} ${text}`)
      return (JSON.parse(text) as { results: Array<{ status: string }> }).results
    },
    close: () => void client.destroy(),
  }
}

/**
 * WebSocket: push messages on the live stream a syncing client keeps open anyway (from the
 * current head, so it also receives its own changes back, as a real client does).
 */
async function wsClient(
  WS: WebSocketClass,
  url: string,
  token: string,
  head: number,
): Promise<{ push: Push; close(): void }> {
  const ws = new WS(`${url.replace(/^http/, 'ws')}/sync/stream?since=${head}`, {
    headers: { authorization: `Bearer ${token}` },
  })
  const waiting = new Map<number, (results: Array<{ status: string }>) => void>()
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as {
      type: string
      id?: number
      results?: Array<{ status: string }>
    }
    if (m.type === 'pushed') waiting.get(m.id!)?.(m.results!)
  })
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)))
  let n = 0
  return {
    push(mutations) {
      const id = ++n
      return new Promise((resolve) => {
        waiting.set(id, (r) => (waiting.delete(id), resolve(r)))
        ws.send(JSON.stringify({ type: 'push', id, mutations }))
      })
    },
    close: () => ws.close(),
  }
}

/** CPU time (user + system, ms) a process has used so far, on Linux; undefined elsewhere. */
export function cpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return undefined
  }
}

/**
 * CPU time (ms) a PostgreSQL cluster has used so far, on Linux: its postmaster, the processes it
 * started (backends, WAL writer, checkpointer…) and those it reaped. Undefined elsewhere.
 */
export function clusterCpuMs(dir: string): number | undefined {
  try {
    const postmaster = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
    const stat = (pid: number | string): string[] =>
      readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    const own = stat(postmaster)
    // utime, stime, and the reaped children's cutime, cstime (clock ticks).
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue
      try {
        const f = stat(pid)
        if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12])
      } catch {
        // gone meanwhile: its time is in the postmaster's reaped children's now
      }
    }
    return (ticks * 1000) / 100
  } catch {
    return undefined
  }
}

/** 50 clients, each appending to its own session, one awaited append after another. */
async function measure(
  clients: Array<{ push: Push }>,
  label: string,
  servers: readonly ChildProcess[],
  /** The database's CPU so far (ms), when the storage has one. */
  database?: () => number | undefined,
): Promise<{
  rate: number
  p50: number
  p99: number
  total: number
  cpu?: number
  databaseCpu?: number
  clientCpu: number
}> {
  const latencies: number[] = []
  let counted = 0
  let measuring = false
  let stop = false
  const loops = clients.map(async (c, k) => {
    const session_id = `${label}-${k}`
    const create = sessionMeta(session_id)
    if (sealing)
      create.change.meta = (await sealMeta(sealing.ring, {
        ...create.change.meta,
        status: 'idle',
        kind: 'user',
        metadata: {},
      })) as never
    await c.push([create])
    for (let i = 0; !stop; i++) {
      const t0 = performance.now()
      const results = await c.push(appendMutations(session_id, i, 2 * i + 1))
      if (results.some((r) => r.status !== 'applied'))
        throw new Error(`S4: append refused: ${JSON.stringify(results)}`)
      if (measuring) {
        counted++
        latencies.push(performance.now() - t0)
      }
    }
  })
  await new Promise((r) => setTimeout(r, WARMUP_MS))
  measuring = true
  const t0 = performance.now()
  const cpuAll = (): number | undefined =>
    servers.reduce<number | undefined>(
      (sum, s) =>
        sum === undefined ? undefined : ((c) => (c === undefined ? undefined : sum + c))(cpuMs(s.pid)),
      0,
    )
  const cpu0 = cpuAll()
  const db0 = database?.()
  // The load generator's own CPU (this process: the clients), which the server's cores share.
  const client0 = process.cpuUsage()
  await new Promise((r) => setTimeout(r, MEASURE_MS))
  measuring = false
  const cpu1 = cpuAll()
  const db1 = database?.()
  const client1 = process.cpuUsage(client0)
  const seconds = (performance.now() - t0) / 1000
  stop = true
  await Promise.all(loops)
  latencies.sort((a, b) => a - b)
  const at = (q: number): number =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN
  const cpu = cpu0 !== undefined && cpu1 !== undefined && counted ? (cpu1 - cpu0) / counted : undefined
  return {
    ...(db0 !== undefined && db1 !== undefined && counted && { databaseCpu: (db1 - db0) / counted }),
    rate: counted / seconds,
    p50: at(0.5),
    p99: at(0.99),
    total: counted,
    cpu,
    clientCpu: counted ? (client1.user + client1.system) / 1000 / counted : NaN,
  }
}

/**
 * S4: server throughput for appends. 50 clients on this machine push chat appends (a new entry
 * with explicit id and parent, plus the leaf move) to their own sessions, each awaiting its
 * result before the next, for 5 s after a warm-up. The server runs in its own process over the
 * default file storage (JSONL per session, journal, fsync before acknowledging), then as two
 * instances on one PostgreSQL database (a throwaway cluster; `S4_POSTGRES=0` skips it).
 */
const s4: Workload = {
  id: 'S4',
  title: `server: appends from ${CLIENTS} concurrent clients`,
  env: 'node',
  async run(ctx) {
    // `S4_ROOT`: another checkout whose built server is measured (one commit against another,
    // by this workload).
    const root = process.env.S4_ROOT ?? repoRoot()
    const WS = createRequire(join(root, 'packages/server/package.json'))('ws') as WebSocketClass
    const rows: BenchRow[] = []
    const sealedMode = process.env.S4_SEALED
    const sealer = sealedMode === '1' || sealedMode === 'both' ? await startSealing() : undefined
    const modes = sealedMode === 'both' ? [false, true] : [sealedMode === '1']
    const cluster =
      process.env.S4_POSTGRES === '0' ||
      (process.env.S4_STORAGES !== undefined && !process.env.S4_STORAGES.includes('postgres'))
        ? undefined
        : await startPostgres({ durable: true })
    try {
      // `S4_STORAGES=postgres` (or `file`): that storage only.
      const only = process.env.S4_STORAGES
      for (const storage of [
        ...(only === undefined || only.includes('file') ? (['file'] as const) : []),
        ...(cluster ? (['postgres'] as const) : []),
      ]) {
        // `http-undici`: the same HTTP pushes from a cheaper client (file storage only; see undiciClient).
        for (const transport of storage === 'file'
          ? (['websocket', 'http', 'http-undici'] as const)
          : (['websocket', 'http'] as const))
          for (const sealed of modes) {
            sealing = sealed ? sealer : undefined
            const dataDir = mkdtempSync(join(tmpdir(), 'colloquy-s4-'))
            // Each client is its own user: the server scopes every stream to its principal.
            const tokens = Array.from({ length: CLIENTS }, (_, k) => `s4-token-${k}`)
            const tokensFile = join(dataDir, 'tokens.json')
            writeFileSync(
              tokensFile,
              JSON.stringify(Object.fromEntries(tokens.map((t, k) => [t, `user-${k}`]))),
            )
            // PostgreSQL: two instances on one database, clients alternating between them.
            const servers =
              storage === 'file'
                ? [await startServer(root, ['--data-dir', join(dataDir, 'data')], tokensFile)]
                : await ((db: Promise<string>) =>
                    db.then(async (url) => [
                      await startServer(root, ['--postgres', url], tokensFile),
                      await startServer(root, ['--postgres', url], tokensFile),
                    ]))(cluster!.createDatabase())
            try {
              // The change log's head, as a pull tells it to an authenticated caller (/health says status only).
              const head = (
                (await (
                  await fetch(`${servers[0].url}/sync/pull?since=0&limit=1`, {
                    headers: { authorization: `Bearer ${tokens[0]}` },
                  })
                ).json()) as { head: number }
              ).head
              const clients = await Promise.all(
                tokens.map((t, k) =>
                  ((url) =>
                    transport === 'http'
                      ? httpClient(url, t)
                      : transport === 'http-undici'
                        ? undiciClient(url, t)
                        : wsClient(WS, url, t, head))(servers[k % servers.length].url),
                ),
              )
              const r = await measure(
                clients,
                transport,
                servers.map((s) => s.child),
                cluster && storage === 'postgres' ? () => clusterCpuMs(cluster.dir) : undefined,
              )
              for (const c of clients) c.close()
              const load = loadavg()[0].toFixed(1)
              const mode = sealing ? `${transport}, sealed` : transport
              const named = (m: string): string =>
                storage === 'file' ? `colloquy-server (${m})` : `colloquy-server postgres x2 (${m})`
              const subject = named(mode)
              // The same storage and transport in clear, measured just before in this run.
              const clearSubject = named(transport)
              ctx.log(
                `${subject}: ${Math.round(r.rate)} appends/s (${r.total} in ${MEASURE_MS / 1000} s), latency p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, server CPU ${r.cpu?.toFixed(3) ?? '?'} ms/append,${r.databaseCpu === undefined ? '' : ` database CPU ${r.databaseCpu.toFixed(3)} ms/append,`} client CPU ${r.clientCpu.toFixed(3)} ms/append, load ${load}`,
              )
              rows.push({
                id: 'S4',
                subject,
                metric: 'appends/s',
                value: r.rate,
                unit: 'appends/s',
                better: 'higher',
                // The target is read on the rows whose clients leave the server its share of the cores; Node's
                // http client spends more CPU per request than the server does (its note says how much).
                ...(sealing && modes.length === 2
                  ? { baseline: clearSubject }
                  : storage !== 'file'
                    ? { baseline: `colloquy-server (${mode})` }
                    : transport === 'http'
                      ? {}
                      : { target: `>= ${TARGET.toLocaleString('en-US')} appends/s`, pass: r.rate >= TARGET }),
                note: `${CLIENTS} clients (one user each), 1 awaited append per push${sealing ? ', sessions end-to-end encrypted (sealed metas and entry boxes)' : ''}; client: ${CLIENT_NOTE[transport]} (${r.clientCpu.toFixed(3)} ms CPU per append); ${storage === 'file' ? 'file storage with fsync' : 'PostgreSQL (throwaway cluster, flushing at commit) with two server instances, clients alternating'}; latency p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; 1-min load average ${load} during the run`,
              })
              // Contention-independent: what one append costs the server(s), so 1000 / value is the rate one free core sustains.
              if (r.cpu !== undefined)
                rows.push({
                  id: 'S4',
                  subject,
                  metric: 'server CPU per append',
                  value: r.cpu,
                  unit: 'ms',
                  better: 'lower',
                  ...(sealing && modes.length === 2 && { baseline: clearSubject }),
                })
              // PostgreSQL's own CPU per append (every process of the cluster): the other half of a commit's cost.
              if (r.databaseCpu !== undefined)
                rows.push({
                  id: 'S4',
                  subject,
                  metric: 'database CPU per append',
                  value: r.databaseCpu,
                  unit: 'ms',
                  better: 'lower',
                  ...(sealing && modes.length === 2 && { baseline: clearSubject }),
                })
            } finally {
              // A profiled server (S4_SERVER_NODE_ARGS) writes its profile on a clean exit only.
              for (const s of servers)
                if (process.env.S4_SERVER_NODE_ARGS) {
                  const exited = new Promise((r) => s.child.once('exit', r))
                  s.child.kill('SIGINT')
                  await exited
                } else s.child.kill('SIGKILL')
              rmSync(dataDir, { recursive: true, force: true })
            }
          }
      }
    } finally {
      cluster?.stop()
    }
    return rows
  },
}

export default s4
