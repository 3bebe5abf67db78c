import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import {
  fileStorage,
  memoryStorage,
  postgresStorage,
  type FileStorageOptions,
  type PostgresStorageOptions,
} from './storage/index.js'
import { createServer, type ColloquyServer, type ServerOptions } from './server.js'
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
  --max-heads <n>         session heads kept in memory (default 500; --postgres or the
                          data directory); the others are read from storage when used
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

/**
 * What a caller of `runCommandLine` may add to what the command line builds: options merged
 * into the storage's and the server's, and a step before it listens. The `colloquy-server`
 * command passes none; the crash and fairness tests inject their faults and test routes through
 * it (test/support/test-server.mjs), so no flag or route of the installed command reaches them.
 */
export interface CommandLineHooks {
  fileStorage?: Partial<FileStorageOptions>
  postgresStorage?: Partial<PostgresStorageOptions>
  server?: Partial<ServerOptions>
  beforeListen?(server: ColloquyServer): void | Promise<void>
}

/** `colloquy-server` with `argv` (its arguments, without node and the script): parses, starts, listens until SIGINT or SIGTERM. */
export async function runCommandLine(argv: readonly string[], hooks: CommandLineHooks = {}): Promise<void> {
  const parse = () =>
    parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'data-dir': { type: 'string' },
        memory: { type: 'boolean' },
        postgres: { type: 'string' },
        'poll-ms': { type: 'string' },
        'cache-mb': { type: 'string' },
        'max-heads': { type: 'string' },
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
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    })
  let args: ReturnType<typeof parse>
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
  for (const spec of [
    ...(o.token ?? []),
    ...(process.env.COLLOQUY_TOKEN ? [process.env.COLLOQUY_TOKEN] : []),
  ]) {
    const m = /^([A-Za-z0-9_.@-]+)=(.+)$/.exec(spec)
    if (m) tokens[m[2]] = m[1]
    else tokens[spec] = 'default'
  }
  if (o['tokens-file']) {
    const parsed: unknown = JSON.parse(readFileSync(o['tokens-file'], 'utf8'))
    if (typeof parsed !== 'object' || parsed === null)
      fail('--tokens-file must hold a JSON object { token: principal }')
    for (const [token, principal] of Object.entries(parsed))
      if (typeof principal === 'string') tokens[token] = principal
  }

  /** A limit flag: undefined when not given (the server's default applies). */
  const limit = (name: keyof typeof o & string): number | undefined =>
    o[name] === undefined ? undefined : integer(o[name] as string, name, 0)

  const dataDir = resolve(o['data-dir'] ?? './data')
  if (o.postgres && (o.memory || o['data-dir']))
    fail('--postgres cannot be combined with --memory or --data-dir')
  const maxHeads = o['max-heads'] === undefined ? undefined : integer(o['max-heads'], 'max-heads', 500)
  if (maxHeads === 0) fail('--max-heads expects a positive integer, got 0')
  const storage = o.postgres
    ? postgresStorage({
        connectionString: o.postgres,
        pollMs: o['poll-ms'] === undefined ? undefined : integer(o['poll-ms'], 'poll-ms', 1000),
        ...hooks.postgresStorage,
      })
    : o.memory
      ? memoryStorage()
      : fileStorage({
          dir: dataDir,
          fsync: !o['no-fsync'],
          // Heads on demand only when a bound is asked for (see `FileStorageOptions.paged`).
          paged: maxHeads !== undefined,
          // What the storage skips on open (a bad entry of the data directory) goes to the server's log.
          warn: (m: string) => console.error(`[colloquy-server] data directory: ${m}`),
          ...hooks.fileStorage,
        })
  const origins = o.origin?.includes('*') ? '*' : o.origin
  for (const name of o['allowed-host'] ?? [])
    if (hostName(name) === undefined) fail(`--allowed-host expects a host name, got ${name}`)

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
    ...(maxHeads !== undefined && { maxHeads }),
    cache:
      o['cache-mb'] === undefined
        ? undefined
        : { maxBytes: integer(o['cache-mb'], 'cache-mb', 16) * 1024 * 1024 },
    ...hooks.server,
  })
  await hooks.beforeListen?.(server)
  let url: string
  try {
    ;({ url } = await server.listen({ port: integer(o.port, 'port', 8787), host: o.host ?? '127.0.0.1' }))
  } catch (e) {
    await server.close().catch(() => {})
    fail((e as Error).message)
  }
  if (!Object.keys(tokens).length && o['insecure-no-auth-on-network']) {
    process.stderr.write(
      `colloquy-server: WARNING: no tokens and --insecure-no-auth-on-network: every machine that can reach ${url} may read and delete every session\n`,
    )
  }
  // The first stdout line is machine-readable: tests and scripts read the URL from it.
  process.stdout.write(
    `colloquy-server listening on ${url} (${o.postgres ? 'postgres' : o.memory ? 'memory' : `data: ${dataDir}`}${Object.keys(tokens).length ? ', auth: bearer' : ', no auth'})\n`,
  )

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
}
