import type { IncomingMessage, ServerResponse } from 'node:http'
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import type { HttpBindings } from '@hono/node-server'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import { cors } from 'hono/cors'
import type { UpgradeWebSocket, WSEvents } from 'hono/ws'
import type { WebSocket } from 'ws'
import type { Credentials, Principal } from '../auth.js'
import { accessOf, feedFilter, unauthorized, type Access, type Env } from './access.js'
import { checkCrossSite } from './cross-site.js'
import type { HostAllowList } from './hosts.js'
import { pageJson, type ChangeFeed } from '../changes/change-feed.js'
import { HttpError, invalidRequest, toWire, tooLarge } from '../errors.js'
import { sendJson } from './ws-json.js'
import { eventStream } from './events-ws.js'
import { parseJsonInSlices, type JsonLimits } from './json-limits.js'
import { history, historyCapabilities } from './history.js'
import { liveStream, type LiveHub } from './live.js'
import { parsePushInSlices, push } from './push.js'
import { RateLimiter } from './rate-limit.js'
import { bodyRoom, callAs, type Service } from './rpc.js'
import { getKeyring, putKeyring } from '../keyrings.js'

/** Every limit of the server (packages/server/README.md, "Limits", says why each default). */
export interface Limits extends JsonLimits {
  /** Largest request body (and WebSocket message), bytes. */
  maxBodyBytes: number
  /** Most mutations in one push. */
  maxBatch: number
  /** Default and largest page of a pull (and of the live stream's backlog). */
  pullLimit: number
  maxPullLimit: number
  /** Bytes a WebSocket client may leave unread before it is disconnected. */
  maxBuffered: number
  /** Per principal: sustained requests (and WebSocket messages) per second; 0 = unlimited. */
  requestsPerSecond: number
  /** Per principal: requests allowed in a burst above the sustained rate. */
  requestBurst: number
  /** Per principal: WebSockets open at once; 0 = unlimited. */
  maxSockets: number
  /** Per principal: sessions held; 0 = unlimited. */
  maxSessions: number
  /** Per principal: bytes stored (JSON of metas and entries); 0 = unlimited. */
  maxStoredBytes: number
}

export interface AppConfig {
  service: Service & { changes: ChangeFeed; hub: LiveHub }
  /**
   * How callers are known. `local`: no credentials are configured, and every request that
   * passes the Host and cross-site checks is granted the local user, scope `all`. `tokens`: a
   * request is authenticated or refused.
   */
  auth:
    | { readonly mode: 'local' }
    | {
        readonly mode: 'tokens'
        authenticate(credentials: Credentials, request: () => Request): Promise<Principal | undefined>
      }
  /** Scope an authenticated principal to its `metadata.owner`; off, principals are granted `all`. */
  tenancy: boolean
  /** Browser origins allowed (CORS, WebSocket `Origin`, and the Origin of state-changing requests). */
  allowOrigin: (origin: string) => boolean
  /** The `Host` names answered (DNS rebinding); `any`: not checked. */
  hosts: HostAllowList | 'any'
  limits: Limits
  upgradeWebSocket: UpgradeWebSocket<WebSocket>
  info: { name: string; version: string }
  log(message: string): void
}

/** What the steps every route shares read from a request (Node's own request when there is one). */
interface RequestView {
  /** The method the client sent (on a WebSocket upgrade, Hono's routing always sees GET). */
  readonly method: string
  header(name: string): string | undefined
  /** The Authorization header; null when it came more than once. */
  authorization(): string | null | undefined
  query(name: string): string | undefined
  incoming: IncomingMessage | undefined
  /** The WHATWG Request, for a custom auth hook (built only when asked for). */
  raw(): Request
}

export type { Env } from './access.js'

/** Close code for a WebSocket refused for missing or bad credentials (browsers cannot see a 401). */
export const WS_UNAUTHORIZED = 4401
/** Close code for a WebSocket over its principal's limit of open sockets (HTTP 429's counterpart). */
export const WS_TOO_MANY = 4429

/**
 * A WebSocket handshake, as Node tells one (it hands such requests to its `upgrade` event): a
 * GET with `Upgrade: websocket` (once) and `Connection` naming `upgrade`. Only a handshake may
 * carry its token in the query string, and only a refused handshake is answered with 4401.
 */
function isHandshake(r: RequestView): boolean {
  return (
    r.method === 'GET' &&
    r.header('upgrade')?.trim().toLowerCase() === 'websocket' &&
    (r.header('connection') ?? '').split(',').some((t) => t.trim().toLowerCase() === 'upgrade')
  )
}

/** The Authorization header of Node's request; null when it came more than once (Node keeps the first). */
function nodeAuthorization(incoming: IncomingMessage): string | null | undefined {
  const raw = incoming.rawHeaders
  let seen = 0
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') seen++
  return seen > 1 ? null : incoming.headers.authorization
}

/** A request header, from Node's parsed headers when there are some (no WHATWG Headers built). */
function header(c: Context, name: string): string | undefined {
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming
  return incoming ? nodeHeader(incoming, name) : c.req.header(name)
}

function nodeHeader(incoming: IncomingMessage, name: string): string | undefined {
  const v = incoming.headers[name]
  return Array.isArray(v) ? v.join(', ') : v
}

const viewOf = (c: Context): RequestView => ({
  method: (c.env as Partial<HttpBindings> | undefined)?.incoming?.method ?? c.req.method,
  header: (name) => header(c, name),
  authorization() {
    const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming
    return incoming ? nodeAuthorization(incoming) : c.req.header('authorization')
  },
  query: (name) => c.req.query(name),
  incoming: (c.env as Partial<HttpBindings> | undefined)?.incoming,
  raw: () => c.req.raw,
})

/**
 * The request body as text and its size in bytes, at most `max` bytes (413 past it, decided
 * before anything is parsed). Read straight from Node's request stream when there is one:
 * building a WHATWG Request per call costs more than the rest of a push.
 */
async function readBody(r: RequestView, max: number): Promise<{ text: string; bytes: number }> {
  const declared = Number(r.header('content-length'))
  const incoming = r.incoming
  if (declared > max) throw refusal(incoming, max)
  if (!incoming) {
    const text = await r.raw().text()
    const bytes = Buffer.byteLength(text)
    if (bytes > max) throw refusal(incoming, max)
    return { text, bytes }
  }
  const body = await readIncoming(incoming, max)
  return { text: body.toString('utf8'), bytes: body.length }
}

/** 413 for a body over `max`; what is left of it is not wanted, and neither is the connection. */
function refusal(incoming: IncomingMessage | undefined, max: number): HttpError {
  incoming?.resume()
  return tooLarge(`request body exceeds ${max} bytes`, { Connection: 'close' })
}

/**
 * A request's body from Node's stream, with plain stream events (an async iterator over the
 * request costs more than the push it carries). Once settled, later events are ignored rather
 * than unsubscribed from: the listeners go with the request, and removing them costs more.
 * Past `max` the rest is drained unread (the 413 closes the connection).
 */
function readIncoming(incoming: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const fail = (e: unknown): void => {
      if (settled) return
      settled = true
      reject(e)
    }
    incoming.on('data', (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size > max) fail(refusal(incoming, max))
      else chunks.push(chunk)
    })
    incoming.on('end', () => {
      if (settled) return
      settled = true
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
    })
    incoming.on('error', fail)
    // Closed before its end (the client went away, `aborted` comes with it): nothing more will
    // come. It is also emitted after every end: no error is built then.
    incoming.on('close', () => settled || fail(new Error('request aborted')))
  })
}

const nonNegative = (v: string | undefined, name: string, fallback: number): number => {
  if (v === undefined || v === '') return fallback
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw invalidRequest(`${name}: expected a non-negative integer`)
  return Number(v)
}

/** The `epoch` a client stored with its checkpoint: an opaque token, bounded. */
const epochOf = (v: string | undefined): string | undefined => {
  if (v === undefined || v === '') return undefined
  if (v.length > 100) throw invalidRequest('epoch: at most 100 characters')
  return v
}

/** The status, headers and wire body a failure is answered with (5xx details go to the log only, see `toWire`). */
function failure(
  cfg: AppConfig,
  err: unknown,
  route: string,
): { status: number; headers: Readonly<Record<string, string>> | undefined; body: unknown } {
  const { status, body } = toWire(err, (m) => cfg.log(`${route}: ${m}`))
  return { status, headers: err instanceof HttpError ? err.headers : undefined, body }
}

/** A JSON answer written on Node's response: one `writeHead` with a flat list of headers, then the body. */
function writeJson(res: ServerResponse, value: unknown): void {
  const text = JSON.stringify(value)
  // A flat list of names and values: Node stores it as it is, without walking an object's keys.
  res.writeHead(200, ['Content-Type', 'application/json', 'Content-Length', String(Buffer.byteLength(text))])
  res.end(text)
}

/** Every route of the protocol (packages/server/README.md). */
export function createRoutes(cfg: AppConfig, app = new Hono<Env>()): Hono<Env> {
  const { service, limits } = cfg

  app.onError((err, c) => {
    const { status, headers, body } = failure(cfg, err, `${c.req.method} ${c.req.path}`)
    for (const name in headers) c.header(name, headers[name])
    return c.json(body, status as 500)
  })
  app.notFound((c) =>
    c.json(
      {
        error: { code: 'http/not_found', message: `http/not_found: no route ${c.req.method} ${c.req.path}` },
      },
      404,
    ),
  )

  // DNS rebinding: a request naming a host this server does not answer to is refused before
  // anything else, public routes included.
  const checkHost = (r: Pick<RequestView, 'header'>): void => {
    if (cfg.hosts !== 'any' && !cfg.hosts.allows(r.header('host')))
      throw new HttpError(
        403,
        'auth/forbidden_host',
        'this server does not answer to that Host name (see --allowed-host)',
      )
  }
  app.use('*', async (c, next) => {
    checkHost(viewOf(c))
    await next()
  })

  const corsHeaders = cors({
    origin: (origin) => (cfg.allowOrigin(origin) ? origin : null),
    allowMethods: ['GET', 'POST', 'PUT', 'OPTIONS'],
    allowHeaders: ['Authorization', 'Content-Type'],
    maxAge: 600,
  })
  // Only browsers send Origin; other clients skip the CORS work (it forces a full Response).
  app.use('*', (c, next) => (header(c, 'origin') !== undefined ? corsHeaders(c, next) : next()))

  // Public: liveness (its status only: how much a server holds is nobody's business), and
  // capability discovery as the Agent Application Protocol allows.
  app.get('/health', (c) => c.json({ status: 'ok' }))
  app.get('/meta', (c) => {
    const capabilities = { history: historyCapabilities }
    return c.json({
      version: 1,
      server: cfg.info,
      capabilities,
      agents: [{ name: cfg.info.name, version: cfg.info.version, tools: [], capabilities }],
    })
  })

  // Per principal: a token bucket for requests; WebSocket messages draw on it too. Failed
  // authentications (HTTP and WebSocket handshakes alike) draw on a bucket per client address,
  // so tokens cannot be guessed at speed.
  const rate = new RateLimiter(limits.requestsPerSecond, Math.max(1, limits.requestBurst))
  const tooMany = (wait: number): HttpError =>
    new HttpError(
      429,
      'http/too_many_requests',
      `more than ${limits.requestsPerSecond} requests per second: retry after ${Math.ceil(wait / 1000)} s`,
      { 'Retry-After': String(Math.ceil(wait / 1000)) },
      wait,
    )
  const throttle = (key: string): void => {
    const wait = rate.take(key)
    if (wait > 0) throw tooMany(wait)
  }

  const LOCAL: Access = { who: { kind: 'local' }, scope: { kind: 'all', grant: 'local' }, caller: '' }
  const auth = cfg.auth
  /**
   * The one gate in front of every protected route and the WebSocket endpoints:
   * it yields the request's Access or refuses it. Without valid credentials a request is
   * answered 401, whatever its Upgrade or Connection headers say; a real WebSocket handshake
   * (`refused`) is answered by a socket closed with 4401 at once, which runs no route (a browser
   * sees close codes, not statuses). Failed attempts count against the caller's address first.
   * Then the caller's rate, then the cross-site check of state-changing requests.
   */
  const gate = async (r: RequestView): Promise<{ access: Access } | { refused: 'socket' }> => {
    let access = LOCAL
    if (auth.mode === 'tokens') {
      const handshake = isHandshake(r)
      const principal = await auth.authenticate(
        { authorization: () => r.authorization(), query: (name) => r.query(name), handshake },
        r.raw,
      )
      if (principal === undefined) {
        const address = r.incoming?.socket.remoteAddress
        if (address !== undefined) throttle(`\u0000address:${address}`)
        if (handshake) return { refused: 'socket' }
        throw unauthorized()
      }
      access = {
        who: { kind: 'principal', principal },
        scope: cfg.tenancy ? { kind: 'owner', owner: principal } : { kind: 'all', grant: 'tenancy-off' },
        caller: principal,
      }
    }
    throttle(access.caller)
    checkCrossSite(r.method, r.header('content-type'), r.header('origin'), cfg.allowOrigin)
    return { access }
  }
  // What answers a refused handshake: accepted, then closed with 4401 (no route runs).
  const refusedSocket = cfg.upgradeWebSocket(() => ({
    onOpen: (_e, ws) => ws.close(WS_UNAUTHORIZED, 'unauthorized'),
  }))

  app.use('*', async (c, next) => {
    const r = viewOf(c)
    const outcome = await gate(r)
    if ('refused' in outcome) {
      const answer = await refusedSocket(c, async () => {})
      if (!answer) throw unauthorized()
      return answer
    }
    // Node hands every request with Upgrade and Connection: upgrade to the WebSocket upgrade,
    // which routes it as a GET: any other method there is no handshake, and reaches no route.
    if (r.method !== c.req.method)
      throw new HttpError(400, 'http/bad_request', 'a WebSocket handshake is a GET')
    c.set('access', outcome.access)
    await next()
  })

  /** The request body, parsed with the server's limits, and its size in bytes. */
  const readJson = async (r: RequestView): Promise<{ value: unknown; bytes: number }> => {
    // Requiring JSON also makes every cross-origin write a preflighted request.
    if (!/^application\/json\b/i.test(r.header('content-type') ?? ''))
      throw new HttpError(415, 'session/invalid_request', 'expected Content-Type: application/json')
    const { text, bytes } = await readBody(r, limits.maxBodyBytes)
    return { value: text.trim() ? await parseJsonInSlices(text, limits) : undefined, bytes }
  }
  const body = (c: Context): Promise<{ value: unknown; bytes: number }> => readJson(viewOf(c))
  const sameOrigin: MiddlewareHandler = async (c, next) => {
    // Browsers do not apply CORS to WebSockets: check their Origin here.
    const origin = header(c, 'origin')
    if (origin !== undefined && !cfg.allowOrigin(origin))
      throw new HttpError(403, 'auth/forbidden_origin', `origin ${origin} is not allowed`)
    await next()
  }
  const upgradeRequired = (c: Context) =>
    c.json(
      {
        error: {
          code: 'http/upgrade_required',
          message: 'http/upgrade_required: this endpoint is a WebSocket',
        },
      },
      426,
    )
  const sockets = new Map<string, number>()
  /**
   * A WebSocket endpoint. Past its principal's limit of open sockets, a socket is accepted and
   * closed with 4429 (a browser sees close codes, not statuses); every message draws on the
   * principal's request rate, and one over it is answered with an error and dropped.
   */
  const socket = (open: (c: Context<Env>) => WSEvents<WebSocket>) =>
    cfg.upgradeWebSocket((c: Context<Env>): WSEvents<WebSocket> => {
      const caller = accessOf(c).caller
      const inner = open(c)
      // Counted from open to close (a handshake that never completes never counts).
      let state: 'new' | 'counted' | 'refused' | 'closed' = 'new'
      return {
        onOpen(event, ws) {
          const held = sockets.get(caller) ?? 0
          if (limits.maxSockets > 0 && held >= limits.maxSockets) {
            state = 'refused'
            return ws.close(WS_TOO_MANY, `too many WebSockets: at most ${limits.maxSockets} per principal`)
          }
          state = 'counted'
          sockets.set(caller, held + 1)
          inner.onOpen?.(event, ws)
        },
        onMessage(event, ws) {
          if (state !== 'counted') return
          const wait = rate.take(caller)
          if (wait > 0)
            return void sendJson(
              ws,
              { type: 'error', retry_after_ms: wait, error: toWire(tooMany(wait), cfg.log).body.error },
              limits.maxBuffered,
            )
          inner.onMessage?.(event, ws)
        },
        onClose(event, ws) {
          if (state !== 'counted') return
          state = 'closed'
          const n = (sockets.get(caller) ?? 1) - 1
          if (n > 0) sockets.set(caller, n)
          else sockets.delete(caller)
          inner.onClose?.(event, ws)
        },
      }
    })

  app.post('/rpc/:fn', async (c) => {
    // A declared body the caller's byte quota has no room for (a large `put-attachment`) is
    // refused before a byte of it is read, as the upload routes refuse theirs.
    const declared = Number(header(c, 'content-length'))
    if (declared > 0) {
      const room = await bodyRoom(service, accessOf(c).scope, c.req.param('fn'))
      if (declared > room) {
        viewOf(c).incoming?.resume()
        throw new HttpError(
          403,
          'session/invalid_request',
          `quota exceeded: the request is ${declared} bytes, ${room} are left of the stored-bytes quota`,
          { Connection: 'close' },
        )
      }
    }
    const { value, bytes } = await body(c)
    return c.json((await callAs(service, accessOf(c).scope, c.req.param('fn'), value, bytes)) ?? null)
  })

  const pushed = async (r: RequestView, access: Access): Promise<{ results: unknown[] }> => {
    const { value, bytes } = await readJson(r)
    const mutations = await parsePushInSlices(value, limits.maxBatch)
    return { results: await push(service, access.scope, mutations, bytes) }
  }
  app.post('/sync/push', async (c) => {
    const answer = await pushed(viewOf(c), accessOf(c))
    // A push from a program (no Origin: no CORS headers to add) is answered straight on Node's
    // response: no Response is built per push for node-server to read back. This is what the
    // Node fast path that once sat beside this route was for; bench S4's `http` rows measure it.
    const outgoing = (c.env as Partial<HttpBindings> | undefined)?.outgoing
    if (!outgoing || header(c, 'origin') !== undefined) return c.json(answer)
    writeJson(outgoing, answer)
    return RESPONSE_ALREADY_SENT
  })

  app.get('/sync/pull', async (c) => {
    const since = nonNegative(c.req.query('since'), 'since', 0)
    const limit = Math.min(
      Math.max(nonNegative(c.req.query('limit'), 'limit', limits.pullLimit), 1),
      limits.maxPullLimit,
    )
    const page = await service.changes.page(
      since,
      limit,
      feedFilter(service.tenancy, accessOf(c).scope),
      epochOf(c.req.query('epoch')),
    )
    return c.body(pageJson(page), 200, { 'Content-Type': 'application/json' })
  })

  const stream = {
    pageSize: limits.pullLimit,
    maxBatch: limits.maxBatch,
    maxBuffered: limits.maxBuffered,
    json: limits,
  }
  app.get(
    '/sync/stream',
    sameOrigin,
    socket((c) =>
      liveStream(
        service,
        accessOf(c).scope,
        nonNegative(c.req.query('since'), 'since', 0),
        stream,
        (m) => cfg.log(`WS /sync/stream: ${m}`),
        epochOf(c.req.query('epoch')),
      ),
    ),
    upgradeRequired,
  )
  app.get(
    '/events',
    sameOrigin,
    socket((c) =>
      eventStream(service, accessOf(c).scope, limits.maxBuffered, limits, (m) => cfg.log(`WS /events: ${m}`)),
    ),
    upgradeRequired,
  )

  app.get('/sessions/:id/history', async (c) =>
    c.json(await history(service, accessOf(c).scope, c.req.param('id'))),
  )

  // The caller's wrapped keyring, for a new device to open with the passphrase (end-to-end
  // encryption): wrapped keys only, never a usable one (keyrings.ts).
  app.get('/keyring', async (c) => c.json({ keyring: await getKeyring(service.store, accessOf(c).caller) }))
  app.put('/keyring', async (c) => {
    const { value, bytes } = await body(c)
    await putKeyring(service.store, accessOf(c).caller, value, bytes)
    return c.json({ ok: true })
  })

  return app
}
