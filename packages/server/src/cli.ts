#!/usr/bin/env node
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileStorage, memoryStorage, postgresStorage } from './storage/index.js'
import { createServer } from './server.js'
import { hostName } from './http/hosts.js'

const usage = `Usage: colloquy-server [options]

  --port <n>              port to listen on (default 8787; 0 picks a free one)
  --host <addr>           address to bind (default 127.0.0.1); without tokens, only a
                          loopback address (see --insecure-no-auth-on-network)
  --data-dir <dir>        where sessions are stored (default ./data)
  --memory                keep sessions in memory only (tests, demos)
  --postgres <url>        keep sessions in PostgreSQL (postgres://user:pass@host/db);
                          run any number of instances on one database
  --poll-ms <n>           with --postgres: safety poll of the change log (default 1000)
  --cache-mb <n>          entries kept in memory, in MiB (default 16 with --postgres,
                          unbounded otherwise); idle sessions are read again when needed
  --token [<who>=]<tok>   accept "Authorization: Bearer <tok>" as principal <who>
                          (default "default"); repeatable. COLLOQUY_TOKEN works too.
                          On WebSocket handshakes only, ?access_token=<tok> works too.
                          Without any token, the server serves one local user (see
                          --host, --allowed-host)
  --tokens-file <file>    JSON object mapping tokens to principals
  --no-tenancy            with auth on, do not scope sessions to metadata.owner
  --origin <origin>       browser origin allowed to connect and to write; repeatable, or
                          "*" (default: "*" with tokens, else localhost pages only)
  --allowed-host <name>   a Host name the server answers to besides localhost, 127.0.0.1,
                          [::1] and the --host name (any port); repeatable. Without tokens
                          every other Host is refused (DNS rebinding); with tokens the
                          Host is checked only when this is given
  --insecure-no-auth-on-network
                          without tokens, listen on a non-loopback --host anyway: every
                          machine that can reach it may read and delete every session
  --max-body-bytes <n>    largest request body / WebSocket message (default 4 MiB)
  --max-batch <n>         most mutations in one push (default 1000)
  --max-json-depth <n>    deepest JSON nesting of a body or message (default 64)
  --max-json-array <n>    most elements of one JSON array (default 100000)
  --max-json-keys <n>     most keys of one JSON object (default 10000)
  --max-json-string <n>   longest JSON string, in characters (default 1048576)
  --max-buffered-bytes <n>  unread bytes a WebSocket client may leave before it is
                          disconnected (default 16 MiB)
  Per principal (0 turns one off; with no auth configured all are off unless given):
  --requests-per-second <n>  sustained requests and WebSocket messages (default 200)
  --request-burst <n>     requests above the sustained rate in a burst (default 400)
  --max-sockets <n>       WebSockets open at once (default 32)
  --max-sessions <n>      sessions held (default 100000)
  --max-stored-bytes <n>  bytes stored (default 1 GiB)
  --max-attachment-bytes <n>  largest attachment (default 50 MiB)
  --no-fsync              do not flush to disk before acknowledging a commit
  --test-clock            test mode: the contract's clock and ids, /test/* endpoints
  -h, --help              this text
`

function fail(message: string): never {
  process.stderr.write(`colloquy-server: ${message}\n\n${usage}`)
  process.exit(2)
}

const integer = (v: string | undefined, name: string, fallback: number): number => {
  if (v === undefined) return fallback
  if (!/^\d+$/.test(v)) fail(`--${name} expects a non-negative integer, got ${v}`)
  return Number(v)
}

let args: ReturnType<typeof parse>
function parse() {
  return parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      memory: { type: 'boolean' },
      postgres: { type: 'string' },
      'poll-ms': { type: 'string' },
      'cache-mb': { type: 'string' },
      token: { type: 'string', multiple: true },
      'tokens-file': { type: 'string' },
      'no-tenancy': { type: 'boolean' },
      origin: { type: 'string', multiple: true },
      'allowed-host': { type: 'string', multiple: true },
      'insecure-no-auth-on-network': { type: 'boolean' },
      'max-body-bytes': { type: 'string' },
      'max-batch': { type: 'string' },
      'max-json-depth': { type: 'string' },
      'max-json-array': { type: 'string' },
      'max-json-keys': { type: 'string' },
      'max-json-string': { type: 'string' },
      'max-buffered-bytes': { type: 'string' },
      'requests-per-second': { type: 'string' },
      'request-burst': { type: 'string' },
      'max-sockets': { type: 'string' },
      'max-sessions': { type: 'string' },
      'max-stored-bytes': { type: 'string' },
      'max-attachment-bytes': { type: 'string' },
      'no-fsync': { type: 'boolean' },
      'test-clock': { type: 'boolean' },
      // Test-only flags below: left out of the usage on purpose; the README lists them as never
      // for a server holding data. Fault injection for crash tests: SIGKILL this process at the
      // n-th commit, just after its journal line (session files not written yet) or just before
      // it (nothing written).
      'test-crash-at-commit': { type: 'string' },
      'test-crash-before-commit': { type: 'string' },
      // SIGKILL at the n-th commit between its journal line and that line's flush.
      'test-crash-before-flush': { type: 'string' },
      // With --postgres: SIGKILL at the n-th commit after its version bump, before COMMIT.
      'test-crash-after-bump': { type: 'string' },
      // With --postgres: hold every commit open this long after its version bump; never NOTIFY.
      'test-hold-after-bump': { type: 'string' },
      'test-no-notify': { type: 'boolean' },
      // One stdout line per budgeted scan (`colloquy-work <kind> <spent> <budget>`).
      'test-work-log': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  })
}
try {
  args = parse()
} catch (e) {
  fail((e as Error).message)
}
const o = args.values
if (o.help) {
  process.stdout.write(usage)
  process.exit(0)
}

const tokens: Record<string, string> = {}
for (const spec of [...(o.token ?? []), ...(process.env.COLLOQUY_TOKEN ? [process.env.COLLOQUY_TOKEN] : [])]) {
  const m = /^([A-Za-z0-9_.@-]+)=(.+)$/.exec(spec)
  if (m) tokens[m[2]] = m[1]
  else tokens[spec] = 'default'
}
if (o['tokens-file']) {
  const parsed: unknown = JSON.parse(readFileSync(o['tokens-file'], 'utf8'))
  if (typeof parsed !== 'object' || parsed === null) fail('--tokens-file must hold a JSON object { token: principal }')
  for (const [token, principal] of Object.entries(parsed)) if (typeof principal === 'string') tokens[token] = principal
}

/** A limit flag: undefined when not given (the server's default applies). */
const limit = (name: keyof typeof o & string): number | undefined => (o[name] === undefined ? undefined : integer(o[name] as string, name, 0))

const crashAfter = o['test-crash-at-commit'] === undefined ? undefined : integer(o['test-crash-at-commit'], 'test-crash-at-commit', 0)
const crashBefore = o['test-crash-before-commit'] === undefined ? undefined : integer(o['test-crash-before-commit'], 'test-crash-before-commit', 0)
const crashFlush = o['test-crash-before-flush'] === undefined ? undefined : integer(o['test-crash-before-flush'], 'test-crash-before-flush', 0)
const crashAt = (n: number | undefined) => (n === undefined ? undefined : (tx: number) => void (tx === n && process.kill(process.pid, 'SIGKILL')))
const dataDir = resolve(o['data-dir'] ?? './data')
const crashBump = o['test-crash-after-bump'] === undefined ? undefined : integer(o['test-crash-after-bump'], 'test-crash-after-bump', 0)
const holdMs = integer(o['test-hold-after-bump'], 'test-hold-after-bump', 0)
if (o.postgres && (o.memory || o['data-dir'])) fail('--postgres cannot be combined with --memory or --data-dir')
const storage = o.postgres
  ? postgresStorage({
      connectionString: o.postgres,
      pollMs: o['poll-ms'] === undefined ? undefined : integer(o['poll-ms'], 'poll-ms', 1000),
      notify: !o['test-no-notify'],
      afterVersionBump: async (n) => {
        crashAt(crashBump)?.(n)
        if (holdMs) await new Promise((resolve) => setTimeout(resolve, holdMs))
      },
    })
  : o.memory
  ? memoryStorage()
  : fileStorage({
      dir: dataDir,
      fsync: !o['no-fsync'],
      // What the storage skips on open (a bad entry of the data directory) goes to the server's log.
      warn: (m: string) => console.error(`[colloquy-server] data directory: ${m}`),
      beforeCommitPoint: crashAt(crashBefore),
      afterCommitPoint: crashAt(crashAfter),
      beforeFlush: crashAt(crashFlush),
    })
const origins = o.origin?.includes('*') ? '*' : o.origin
for (const name of o['allowed-host'] ?? []) if (hostName(name) === undefined) fail(`--allowed-host expects a host name, got ${name}`)

const server = await createServer({
  storage,
  token: Object.keys(tokens).length ? tokens : undefined,
  tenancy: o['no-tenancy'] ? false : undefined,
  origins,
  allowedHosts: o['allowed-host'],
  insecureNoAuthOnNetwork: o['insecure-no-auth-on-network'],
  limits: {
    maxBodyBytes: limit('max-body-bytes'),
    maxBatch: limit('max-batch'),
    maxDepth: limit('max-json-depth'),
    maxArrayLength: limit('max-json-array'),
    maxObjectKeys: limit('max-json-keys'),
    maxStringLength: limit('max-json-string'),
    maxBuffered: limit('max-buffered-bytes'),
    requestsPerSecond: limit('requests-per-second'),
    requestBurst: limit('request-burst'),
    maxSockets: limit('max-sockets'),
    maxSessions: limit('max-sessions'),
    maxStoredBytes: limit('max-stored-bytes'),
    max_attachment_bytes: limit('max-attachment-bytes'),
  },
  testMode: o['test-clock'],
  // One stdout line per budgeted scan: the fairness tests check that none passes its budget.
  onWork: o['test-work-log'] ? (kind, spent, budget) => void process.stdout.write(`colloquy-work ${kind} ${spent} ${budget}\n`) : undefined,
  cache: o['cache-mb'] === undefined ? undefined : { maxBytes: integer(o['cache-mb'], 'cache-mb', 16) * 1024 * 1024 },
})
let url: string
try {
  ;({ url } = await server.listen({ port: integer(o.port, 'port', 8787), host: o.host ?? '127.0.0.1' }))
} catch (e) {
  await server.close().catch(() => {})
  fail((e as Error).message)
}
if (!Object.keys(tokens).length && o['insecure-no-auth-on-network']) {
  process.stderr.write(`colloquy-server: WARNING: no tokens and --insecure-no-auth-on-network: every machine that can reach ${url} may read and delete every session\n`)
}
// The first stdout line is machine-readable: tests and scripts read the URL from it.
process.stdout.write(`colloquy-server listening on ${url} (${o.postgres ? 'postgres' : o.memory ? 'memory' : `data: ${dataDir}`}${Object.keys(tokens).length ? ', auth: bearer' : ', no auth'})\n`)

let closing = false
const shutdown = (): void => {
  if (closing) return
  closing = true
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  )
}
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)
