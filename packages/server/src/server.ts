import type { IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { serve, type ServerType } from '@hono/node-server'
import { createNodeWebSocket } from '@hono/node-ws'
import { createStore, type IdKind, type Storage, type Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { Hono } from 'hono'
import type { WebSocket } from 'ws'
import { createRoutes, type Env, type Limits } from './http/app.js'
import { DEFAULT_JSON_LIMITS } from './http/json-limits.js'
import { attachmentRoutes } from './http/attachment-routes.js'
import { removeDeadSpools } from './http/spools.js'
import { Work, type WorkReport } from './work.js'
import { authenticator, type AuthOptions } from './auth.js'
import type { ChangeFeed } from './changes/change-feed.js'
import { ChangeLog } from './changes/change-log.js'
import { fileStorage, hasOwnFeed, hasUsageSource, type ServerStorage } from './storage/index.js'
import { LiveHub } from './http/live.js'
import { trackSocket } from './http/ws-json.js'
import { HostAllowList, isLoopback } from './http/hosts.js'
import { fullTextOf, ServerSearch } from './search/server-search.js'
import { OWNER_KEY, Tenancy } from './tenancy.js'
import { Usage } from './usage.js'

export interface ServerOptions extends AuthOptions {
  /** Where sessions live; default `fileStorage({ dir: './data' })`. */
  storage?: Storage
  /**
   * Scope every read, write and stream to sessions whose `metadata.owner` is the caller's
   * principal. Default: on whenever auth is configured.
   */
  tenancy?: boolean
  /**
   * Browser origins allowed to call (CORS, the `Origin` of WebSockets and of state-changing
   * requests). Default: any origin when auth is configured, otherwise only `localhost` /
   * `127.0.0.1` / `[::1]` pages.
   */
  origins?: '*' | readonly string[]
  /**
   * `Host` names the server answers to besides loopback names (`localhost`, `127.0.0.1`,
   * `[::1]`, any port) and the address it listens on: a request naming another host is refused
   * (403), against DNS rebinding. Checked always without tokens; with tokens only when given.
   */
  allowedHosts?: readonly string[]
  /**
   * Without tokens, `listen` refuses an address other than loopback: the server would serve
   * every session to anyone who can reach it. This says that is what is wanted.
   */
  insecureNoAuthOnNetwork?: boolean
  limits?: Partial<Limits> & {
    default_list_limit?: number
    max_list_limit?: number
    max_attachment_bytes?: number
  }
  /**
   * Entries kept in memory (`maxBytes`); idle sessions are read again from storage. Default:
   * 16 MiB on a storage shared by several instances (PostgreSQL), unbounded otherwise (the file
   * storage's change log keeps what it serves in memory anyway). The budget counts entries'
   * JSON, and what the heap holds for them is more: loading 1M entries through pushes peaked at
   * 389 MiB of RSS with 64 MiB and 292 MiB with 32 (S5), above the 300 MB an instance should
   * stay under; the sessions being written stay cached whatever the budget.
   */
  cache?: { maxBytes: number; idleMs?: number }
  /**
   * Over a storage serving heads on demand (PostgreSQL, the file storage, `memoryStorage({ paged: true })`): how
   * many session heads the store keeps in memory once idle (default 500, as in the browser);
   * the others are read from the storage when used. Ignored by a storage that returns every head
   * when it opens.
   */
  maxHeads?: number
  /** The clock and id generator of the domain service (tests inject them). */
  now?: () => number
  newId?: (kind: IdKind) => string
  log?: (message: string) => void
  /** Told what each budgeted scan spent (see `WORK_BUDGETS`). */
  onWork?: WorkReport
}

export interface ColloquyServer {
  readonly app: Hono<Env>
  readonly store: Store
  readonly changes: ChangeFeed
  /** Starts listening; port 0 picks a free one. Default host 127.0.0.1. */
  listen(options?: { port?: number; host?: string }): Promise<{ port: number; host: string; url: string }>
  close(): Promise<void>
}

/** Defaults of every limit; packages/server/README.md ("Limits") says why each. */
const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxBatch: 1000,
  pullLimit: 500,
  maxPullLimit: 5000,
  maxBuffered: 16 * 1024 * 1024,
  ...DEFAULT_JSON_LIMITS,
  requestsPerSecond: 200,
  requestBurst: 400,
  maxSockets: 32,
  maxSessions: 100_000,
  maxStoredBytes: 1024 * 1024 * 1024,
}

/** Per-principal limits an open (single-user, unauthenticated) server leaves off unless told. */
const PER_PRINCIPAL = ['requestsPerSecond', 'maxSockets', 'maxSessions', 'maxStoredBytes'] as const

const LOCAL_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/

const version = (createRequire(import.meta.url)('../package.json') as { version: string }).version

/** The sync server: the core's domain service over `storage`, behind HTTP and WebSockets. */
export async function createServer(options: ServerOptions = {}): Promise<ColloquyServer> {
  const log = options.log ?? ((m: string) => console.error(`[colloquy-server] ${m}`))
  const authenticate = authenticator(options)
  const given = Object.fromEntries(
    Object.entries(options.limits ?? {}).filter(([, v]) => v !== undefined),
  ) as Partial<Limits>
  const defaults: Limits = { ...DEFAULT_LIMITS }
  if (!authenticate) for (const k of PER_PRINCIPAL) defaults[k] = 0
  const limits: Limits = { ...defaults, ...given }
  const tenancyOn = options.tenancy ?? authenticate !== undefined
  const storage: ServerStorage = options.storage ?? fileStorage({ dir: './data' })
  // Quotas are kept per `metadata.owner` (the principal) with tenancy, for the whole server
  // without; a shared database counts them itself (every instance's writes).
  const usage =
    limits.maxSessions > 0 || limits.maxStoredBytes > 0
      ? new Usage(
          storage,
          limits,
          (m) => (tenancyOn && typeof m?.[OWNER_KEY] === 'string' ? m[OWNER_KEY] : ''),
          hasUsageSource(storage) ? { usage: storage, perOwner: tenancyOn } : undefined,
        )
      : undefined
  const counted = usage?.storage ?? storage
  // A storage shared by several processes keeps the change log itself; otherwise it is kept here.
  const changes: ChangeFeed = hasOwnFeed(counted) ? counted.changeFeed() : new ChangeLog(counted)
  const store = await createStore({
    storage: changes.storage,
    now: options.now,
    newId: options.newId,
    limits: {
      default_list_limit: options.limits?.default_list_limit,
      max_list_limit: options.limits?.max_list_limit,
      max_attachment_bytes: options.limits?.max_attachment_bytes,
    },
    multiTab: false,
    ...(options.maxHeads !== undefined && { maxHeads: options.maxHeads }),
    cache: options.cache ?? (hasOwnFeed(storage) ? { maxBytes: 16 * 1024 * 1024 } : undefined),
  })
  changes.attach(hostOf(store))
  const origins = options.origins ?? (authenticate ? '*' : undefined)
  // Without tokens the Host is always checked (a rebound page would be the local user); with
  // tokens, only against names given: a bearer token is no ambient credential a rebound page
  // could use, and such servers often sit behind names only their proxy knows.
  const hosts =
    !authenticate || options.allowedHosts !== undefined ? new HostAllowList(options.allowedHosts) : 'any'
  const allowOrigin =
    origins === '*'
      ? () => true
      : origins
        ? (o: string) => origins.includes(o)
        : (o: string) => LOCAL_ORIGIN.test(o)
  const tenancy = new Tenancy(hostOf(store))
  const service = {
    store,
    changes,
    tenancy,
    usage,
    hub: new LiveHub(changes, tenancy),
    work: new Work(options.onWork),
    search: new ServerSearch(store, tenancy, fullTextOf(storage)),
  }

  const app = new Hono<Env>()
  const ws = createNodeWebSocket({ app })
  // A WebSocket message is bounded like a request body.
  ws.wss.options.maxPayload = limits.maxBodyBytes
  // Each socket's TCP connection, so messages sent in one tick can leave in one write.
  ws.wss.on('connection', (client: WebSocket, request: IncomingMessage) =>
    trackSocket(client, request.socket),
  )
  createRoutes(
    {
      service,
      // No credentials configured: every request (past the Host and cross-site checks) is granted
      // the local user, explicitly; never read from an absent principal.
      auth: authenticate ? { mode: 'tokens', authenticate } : { mode: 'local' },
      tenancy: tenancyOn,
      allowOrigin,
      hosts,
      limits,
      upgradeWebSocket: ws.upgradeWebSocket,
      info: { name: 'colloquy-server', version },
      log,
    },
    app,
  )
  attachmentRoutes(app, { service, maxBytes: options.limits?.max_attachment_bytes ?? 52_428_800 })
  // Spools a crashed server left in the temporary directory (uploads it never finished).
  await removeDeadSpools(log)

  let server: ServerType | undefined
  return {
    app,
    store,
    changes,
    listen({ port = 0, host = '127.0.0.1' } = {}) {
      if (!authenticate && !isLoopback(host) && !options.insecureNoAuthOnNetwork) {
        return Promise.reject(
          new Error(
            `refusing to listen on ${host} without tokens: anyone who can reach it could read and delete every session. ` +
              'Configure tokens (--token, --tokens-file), listen on a loopback address (127.0.0.1, ::1, localhost), ' +
              'or, if every machine that can reach it may do so, pass --insecure-no-auth-on-network (insecureNoAuthOnNetwork).',
          ),
        )
      }
      // The name it listens on is a name it answers to.
      if (hosts !== 'any') hosts.add(host)
      return new Promise((resolve, reject) => {
        const s = serve({ fetch: app.fetch, port, hostname: host }, (info: AddressInfo) => {
          resolve({
            port: info.port,
            host,
            url: `http://${host.includes(':') ? `[${host}]` : host}:${info.port}`,
          })
        })
        s.once('error', reject)
        ws.injectWebSocket(s)
        // A socket Node handed to the upgrade is detached from HTTP and paused: once its side
        // is ended (a refused upgrade's answer, or a WebSocket's close), nothing would read the
        // peer's end behind any bytes it sent (a POST's body), and it would stay open for good.
        s.on(
          'upgrade',
          (_req: IncomingMessage, socket: import('node:stream').Duplex) =>
            void socket.once('finish', () => socket.destroy()),
        )
        server = s
      })
    },
    async close() {
      for (const client of ws.wss.clients) client.terminate()
      if (server) {
        const s = server as import('node:http').Server
        await new Promise<void>((resolve) => {
          s.close(() => resolve())
          s.closeAllConnections?.()
        })
      }
      service.search.close()
      await store.close()
    },
  }
}
