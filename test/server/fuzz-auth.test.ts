import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { FUNCTION_IDS } from '@colloquy/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI } from '../conformance/http-process.js'
import {
  currentDataBackend,
  pull,
  pullAll,
  rpc,
  startServer,
  user,
  type KeptData,
  type ServerProcess,
} from './helpers.js'

/**
 * Who may send, on every route the server has: the routes are read from the router itself
 * (Hono's `app.routes` of a server built like the CLI's), so a route added later is covered
 * without anyone listing it. Each is sent, over raw TCP (exact header casing, duplicates, and
 * WebSocket handshakes as a browser sends them), with every credential and header variant below,
 * with and without an `Origin` (without one, `POST /sync/push` takes the server's Node fast
 * path). What must hold:
 *
 * - without valid credentials: 401 (a real WebSocket handshake: a socket closed with 4401 and
 *   nothing else); nothing of Alice's in any answer; nothing written (change head, both
 *   principals' sessions, messages and attachment unchanged);
 * - with another tenant's token: nothing of Alice's in any answer (bodies and WebSocket
 *   frames), nothing of hers changed;
 * - no token mode: a foreign `Host` (DNS rebinding) is refused on every route, and no
 *   state-changing route accepts what a page of another site can send (a simple Content-Type,
 *   or a foreign Origin); nothing read, nothing written.
 *
 * Runs on the suite's kept data: the file storage here, PostgreSQL in test/postgres/fuzz-auth.test.ts.
 */
const BACKEND = currentDataBackend()

/** A server on a fresh data directory (or database) of the backend, removed after the file. */
function useServer(args: readonly string[]): { readonly server: ServerProcess } {
  let server: ServerProcess | undefined
  let data: KeptData | undefined
  beforeAll(async () => {
    data = await BACKEND.data()
    server = await startServer([...data.args, ...args])
  })
  afterAll(async () => {
    await server?.stop()
    await data?.remove()
  })
  return {
    get server() {
      return server!
    },
  }
}

const ALICE = 'tok-alice-0123456789'
const BOB = 'tok-bob-0123456789'
/** What only Alice's data holds: no answer to anyone else may carry any of it. */
const MARKS = ['ALICE-SECRET-TITLE', 'ALICE-SECRET-TEXT', 'ALICE-SECRET-BYTES', '"alice"']
const ATTACHMENT_BYTES = Buffer.from('ALICE-SECRET-BYTES')

interface Route {
  readonly method: string
  readonly path: string
}

/**
 * The functions `POST /rpc/:fn` answers, as the server lists them (`RPC_FUNCTION_IDS`, the list
 * its route dispatches on): the store's and the server's own (`session::search`).
 */
let rpcFunctions: readonly string[] = []

/** The routes of a server built as the CLI builds it with these options, from its router. */
async function routesOfRouter(options: Record<string, unknown>): Promise<Route[]> {
  const index = pathToFileURL(join(dirname(CLI), 'index.js')).href
  const script = `
    const { createServer, memoryStorage, RPC_FUNCTION_IDS } = await import(${JSON.stringify(index)})
    const s = await createServer({ storage: memoryStorage(), log: () => {}, ...${JSON.stringify(options)} })
    process.stdout.write(JSON.stringify({
      routes: s.app.routes.map((r) => ({ method: r.method, path: r.path })),
      functions: RPC_FUNCTION_IDS,
    }))
    await s.close()`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  await new Promise((resolve) => child.once('exit', resolve))
  const { routes: all, functions } = JSON.parse(out) as { routes: Route[]; functions: string[] }
  rpcFunctions = functions
  // Middleware (`app.use('*')`) is registered as ALL /*: not a route.
  const seen = new Set<string>()
  return all.filter(
    (r) =>
      !(r.method === 'ALL' && r.path === '/*') &&
      !seen.has(`${r.method} ${r.path}`) &&
      seen.add(`${r.method} ${r.path}`),
  )
}

/** Concrete requests for a route: each parameter filled with Alice's ids, `:fn` with every function. */
function concrete(
  route: Route,
  ids: { session_id: string; attachment_id: string },
): Array<{ method: string; path: string; label: string }> {
  const methods = route.method === 'ALL' ? ['GET', 'POST'] : [route.method]
  let paths = [route.path]
  for (const param of route.path.match(/:\w+/g) ?? []) {
    const values =
      param === ':fn'
        ? [...rpcFunctions]
        : param === ':session_id' || param === ':id'
          ? [ids.session_id]
          : param === ':attachment_id'
            ? [ids.attachment_id]
            : undefined
    // A new route with a parameter this test does not know fails here until it is taught one.
    if (!values) throw new Error(`${route.method} ${route.path}: no value for ${param}`)
    paths = paths.flatMap((p) => values.map((v) => p.replace(param, encodeURIComponent(v))))
  }
  return methods.flatMap((method) =>
    paths.map((path) => ({ method, path, label: `${method} ${route.path}` })),
  )
}

interface Answer {
  status: number
  /** Everything received: status line, headers, body, WebSocket frames' payloads. */
  text: string
  /** WebSocket frames after a 101: opcode and payload. */
  frames: Array<{ op: number; payload: Buffer }>
  header(name: string): string | undefined
}

/** One request over its own TCP connection, exactly as given (header names, casing, repeats). */
function send(
  url: string,
  method: string,
  path: string,
  headers: ReadonlyArray<readonly [string, string]>,
  body?: Buffer,
): Promise<Answer> {
  const { hostname, port } = new URL(url)
  const lines = [`${method} ${path} HTTP/1.1`, ...headers.map(([k, v]) => `${k}: ${v}`)]
  if (body) lines.push(`Content-Length: ${body.length}`)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let buf = Buffer.alloc(0)
    let head: { status: number; headers: Map<string, string>; end: number } | undefined
    let closeSent = false
    const frames: Answer['frames'] = []
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `${method} ${path}: no complete answer in 10 s; got ${buf.toString('latin1').slice(0, 300)}`,
          ),
        ),
      10_000,
    )
    const finish = (error?: Error): void => {
      clearTimeout(timer)
      socket.destroy()
      if (error) return reject(error)
      const h = head!
      resolve({
        status: h.status,
        text: buf.toString('latin1') + frames.map((f) => f.payload.toString('latin1')).join(''),
        frames,
        header: (n) => h.headers.get(n.toLowerCase()),
      })
    }
    /** Server frames (unmasked) after the 101; true once a close frame came. */
    const readFrames = (from: number): boolean => {
      let at = from
      frames.length = 0
      while (at + 2 <= buf.length) {
        const op = buf[at] & 0x0f
        let len = buf[at + 1] & 0x7f
        let start = at + 2
        if (len === 126) {
          if (start + 2 > buf.length) break
          len = buf.readUInt16BE(start)
          start += 2
        } else if (len === 127) {
          if (start + 8 > buf.length) break
          len = Number(buf.readBigUInt64BE(start))
          start += 8
        }
        if (start + len > buf.length) break
        frames.push({ op, payload: buf.subarray(start, start + len) })
        at = start + len
        if (op === 8) return true
      }
      return false
    }
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d])
      if (!head) {
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) return
        const [statusLine, ...rest] = buf.subarray(0, end).toString('latin1').split('\r\n')
        const map = new Map<string, string>()
        for (const line of rest)
          map.set(line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim())
        head = { status: Number(statusLine.split(' ')[1]), headers: map, end: end + 4 }
      }
      if (head.status === 101) {
        // A socket the server accepted: ask to close at once (a masked close frame, code 1000),
        // and keep every frame it sent until its close.
        if (!closeSent) {
          closeSent = true
          socket.write(Buffer.from([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]))
        }
        if (readFrames(head.end)) finish()
        return
      }
      const length = head.headers.get('content-length')
      const bodyBytes = buf.length - head.end
      if (
        length !== undefined
          ? bodyBytes >= Number(length)
          : head.headers.get('transfer-encoding') === 'chunked' && buf.subarray(-5).toString() === '0\r\n\r\n'
      )
        finish()
    })
    socket.on('end', () =>
      head ? finish() : finish(new Error(`${method} ${path}: connection closed without an answer`)),
    )
    socket.on('error', (e) => finish(e))
    socket.write(lines.join('\r\n') + '\r\n\r\n')
    if (body) socket.write(body)
  })
}

/** Credential variants: `query` puts the token in the URL instead of a header. */
interface Credential {
  readonly name: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly query?: string
}
const bearer = (token: string): readonly [string, string] => ['Authorization', `Bearer ${token}`]
const WITHOUT: readonly Credential[] = [
  { name: 'no token', headers: [] },
  { name: 'a wrong token', headers: [bearer('tok-wrong-0123456789')] },
  { name: 'a wrong scheme', headers: [['Authorization', `Basic ${ALICE}`]] },
  { name: 'odd-cased header, wrong token', headers: [['aUtHoRiZaTiOn', 'bEARER tok-wrong']] },
  { name: "Alice's token twice, once wrong", headers: [bearer(ALICE), bearer('tok-wrong')] },
  { name: "a wrong token, then Alice's", headers: [bearer('tok-wrong'), bearer(ALICE)] },
  { name: 'a wrong token in ?access_token=', headers: [], query: 'access_token=tok-wrong' },
  // Alice's real token in the URL: read on WebSocket handshakes only (see `realHandshake`).
  { name: "Alice's token in ?access_token=", headers: [], query: `access_token=${ALICE}` },
  { name: "Alice's token in ?token=", headers: [], query: `token=${ALICE}` },
]
const OTHER_TENANT: readonly Credential[] = [
  { name: "Bob's token", headers: [bearer(BOB)] },
  { name: "Bob's token in ?access_token=", headers: [], query: `access_token=${BOB}` },
]

const KEY: ReadonlyArray<readonly [string, string]> = [
  ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
  ['Sec-WebSocket-Version', '13'],
]
/** Header variants around Upgrade and Connection; `handshake`: what a WebSocket client really sends. */
const SHAPES: ReadonlyArray<{
  name: string
  headers: ReadonlyArray<readonly [string, string]>
  handshake: boolean
}> = [
  { name: 'plain', headers: [['Connection', 'close']], handshake: false },
  {
    name: 'Upgrade: websocket without Connection: Upgrade',
    headers: [['Upgrade', 'websocket'], ...KEY],
    handshake: false,
  },
  {
    name: 'Connection: Upgrade without Upgrade',
    headers: [['Connection', 'Upgrade'], ...KEY],
    handshake: false,
  },
  {
    name: 'a WebSocket handshake',
    headers: [['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ...KEY],
    handshake: true,
  },
  {
    name: 'an odd-cased handshake',
    headers: [['UPGRADE', 'WebSocket'], ['connection', 'keep-alive, UPGRADE'], ...KEY],
    handshake: true,
  },
  {
    name: 'Upgrade twice',
    headers: [['Upgrade', 'websocket'], ['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ...KEY],
    handshake: false,
  },
  {
    name: 'Upgrade: h2c',
    headers: [
      ['Upgrade', 'h2c'],
      ['Connection', 'Upgrade'],
    ],
    handshake: false,
  },
]
const ORIGINS: ReadonlyArray<string | undefined> = [undefined, 'http://localhost:5173']

const leaked = (text: string): string[] => MARKS.filter((m) => text.includes(m))
/** Notes in `failures` any of Alice's marks in the answer to the request `what` names. */
function noteLeaks(failures: string[], what: string, text: string): void {
  if (leaked(text).length) failures.push(`${what}: leaked ${leaked(text).join(', ')}`)
}
/** `path` with `query` added after its own, if it has one. */
const withQuery = (path: string, query: string): string => `${path}${path.includes('?') ? '&' : '?'}${query}`

/** Alice's data: a session with a message and an attachment. */
async function plant(url: string, token?: string): Promise<{ session_id: string; attachment_id: string }> {
  const { session_id } = await rpc(url, 'session::create', { title: 'ALICE-SECRET-TITLE' }, token)
  await rpc(url, 'session::append', { session_id, message: user('ALICE-SECRET-TEXT') }, token)
  const res = await fetch(`${url}/attachments/${session_id}?name=secret.bin&mime=application/octet-stream`, {
    method: 'POST',
    body: ATTACHMENT_BYTES,
    headers: {
      'content-type': 'application/octet-stream',
      ...(token && { authorization: `Bearer ${token}` }),
    },
  })
  expect(res.status).toBe(200)
  const { attachment } = (await res.json()) as { attachment: { attachment_id: string } }
  return { session_id, attachment_id: attachment.attachment_id }
}

/**
 * What must not change: each principal's changes and sessions, Alice's messages and bytes, and
 * (`head`) the change log's head, which any write anywhere moves.
 */
async function stateOf(
  url: string,
  ids: { session_id: string; attachment_id: string },
  tokens: ReadonlyArray<string | undefined>,
  head = true,
): Promise<unknown> {
  const byToken = []
  for (const token of tokens) {
    byToken.push({
      head: head ? (await pull(url, 0, 1, token)).head : 'not compared',
      changes: (await pullAll(url, 0, undefined, token)).changes,
      list: await rpc(url, 'session::list', {}, token),
    })
  }
  const owner = tokens[0]
  const messages = await rpc(url, 'session::messages', { session_id: ids.session_id }, owner)
  const bytes = await fetch(`${url}/attachments/${ids.session_id}/${ids.attachment_id}`, {
    headers: owner ? { authorization: `Bearer ${owner}` } : {},
  }).then((r) => r.text())
  return { byToken, messages, bytes }
}

/** Runs a task per item, `width` at a time. */
async function inParallel<T>(
  items: readonly T[],
  width: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await task(items[next++])
    }),
  )
}

const BODY = Buffer.from(
  JSON.stringify({
    session_id: 'SID',
    title: 'pwned',
    metadata: { owner: 'bob' },
    message: user('pwned'),
    entry_id: 'e',
    messages: [user('pwned')],
    // \`session::search\` for what only Alice's data holds.
    query: 'ALICE-SECRET-TEXT',
    mutations: [{ id: 1, change: { type: 'delete', session_id: 'SID' } }],
    now: 1,
  }),
)

describe(`every route, from the router, refuses a request without valid credentials, whatever its headers, on ${BACKEND.name}`, () => {
  // Per-address and per-principal rates off: every refusal here is the 401 itself.
  const running = useServer([
    '--token',
    `alice=${ALICE}`,
    '--token',
    `bob=${BOB}`,
    '--requests-per-second',
    '0',
    '--no-fsync',
  ])
  let server: ServerProcess
  let routes: Route[]
  let ids: { session_id: string; attachment_id: string }
  const PUBLIC = new Set(['GET /health', 'GET /meta'])
  beforeAll(async () => {
    server = running.server
    routes = await routesOfRouter({ token: { [ALICE]: 'alice', [BOB]: 'bob' } })
    ids = await plant(server.url, ALICE)
  })

  const requests = () => routes.flatMap((r) => concrete(r, ids))
  const body = () => Buffer.from(BODY.toString().replaceAll('SID', ids.session_id))
  const hostHeader = () => ['Host', new URL(server.url).host] as const
  /** Whether a variant is a WebSocket handshake whose query token the server reads (Alice's own: allowed). */
  const realHandshake = (method: string, shape: (typeof SHAPES)[number]) =>
    method === 'GET' && shape.handshake
  /** Every request of the router with each of `creds`, each header shape and each origin. */
  const crossed = (creds: readonly Credential[]) =>
    requests().flatMap((req) =>
      creds.flatMap((cred) =>
        SHAPES.flatMap((shape) => ORIGINS.map((origin) => ({ req, cred, shape, origin }))),
      ),
    )
  /** Sends one of those over its own connection; `what` names it in a failure. */
  async function sendCrossed({ req, cred, shape, origin }: ReturnType<typeof crossed>[number]) {
    const path = cred.query ? withQuery(req.path, cred.query) : req.path
    const headers = [
      hostHeader(),
      ...cred.headers,
      ...shape.headers,
      ...(origin ? [['Origin', origin] as const] : []),
      ...(req.method === 'POST' ? [['Content-Type', 'application/json'] as const] : []),
    ]
    const res = await send(server.url, req.method, path, headers, req.method === 'POST' ? body() : undefined)
    return { res, what: `${req.method} ${path} | ${cred.name} | ${shape.name} | origin ${origin ?? 'none'}` }
  }

  it('the router has the routes this test is about (it reads them, it does not list them)', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`)
    for (const known of [
      'POST /rpc/:fn',
      'POST /sync/push',
      'GET /sync/pull',
      'GET /sync/stream',
      'GET /events',
      'GET /sessions/:id/history',
      'POST /attachments/:session_id',
      'GET /attachments/:session_id/:attachment_id',
      'POST /sync/attachments/:session_id/:attachment_id',
    ]) {
      expect(names).toContain(known)
    }
    // Functions the server answers besides the store's are sent like the store's.
    expect(rpcFunctions).toStrictEqual([...FUNCTION_IDS, 'session::search'])
  })

  it('a production server has no test routes: none in its router, and /test/* is not found even for a caller granted everything', async () => {
    // The test clock and reset exist only in the test launcher (test/support/test-server.mjs).
    expect(
      routes.filter((r) => r.path.startsWith('/test')).map((r) => `${r.method} ${r.path}`),
    ).toStrictEqual([])
    // With tenancy off every principal is granted all sessions, as the test routes required.
    const open = await startServer(['--memory', '--token', `alice=${ALICE}`, '--no-tenancy'])
    try {
      for (const path of ['/test/clock', '/test/reset']) {
        const res = await send(
          open.url,
          'POST',
          path,
          [
            ['Host', new URL(open.url).host],
            bearer(ALICE),
            ['Content-Type', 'application/json'],
            ['Connection', 'close'],
          ],
          Buffer.from('{"now":5}'),
        )
        expect([path, res.status]).toStrictEqual([path, 404])
      }
    } finally {
      await open.stop()
    }
  })

  it("Alice's own token reads her data on these very requests (the marks are seen when they are there)", async () => {
    const res = await send(
      server.url,
      'POST',
      `/rpc/session::get`,
      [hostHeader(), bearer(ALICE), ['Content-Type', 'application/json'], ['Connection', 'close']],
      Buffer.from(JSON.stringify({ session_id: ids.session_id })),
    )
    expect(res.status).toBe(200)
    expect(leaked(res.text)).toContain('ALICE-SECRET-TITLE')
    const ws = await send(server.url, 'GET', '/sync/stream?since=0', [
      hostHeader(),
      bearer(ALICE),
      ...SHAPES[3].headers,
    ])
    expect(ws.status).toBe(101)
  })

  it('no token, a wrong one, a token in the URL, two Authorization headers: 401 or 4401 on every route, nothing read or written', async () => {
    const before = await stateOf(server.url, ids, [ALICE, BOB])
    const cases = crossed(WITHOUT)
    const failures: string[] = []
    let refusedSockets = 0
    await inParallel(cases, 6, async ({ req, cred, shape, origin }) => {
      // A handshake may carry its token in the URL (browsers cannot set headers): Alice's own
      // token there opens her own socket, by design (the positive case is above).
      if (cred.query?.includes(ALICE) && realHandshake(req.method, shape)) return
      const { res, what } = await sendCrossed({ req, cred, shape, origin })
      noteLeaks(failures, what, res.text)
      if (PUBLIC.has(req.label)) {
        if (res.status >= 500) failures.push(`${what}: ${res.status}`)
        return
      }
      if (res.status === 101) {
        refusedSockets++
        // The refusal socket: one close frame, 4401, nothing before it.
        const ok =
          realHandshake(req.method, shape) &&
          res.frames.length === 1 &&
          res.frames[0].op === 8 &&
          res.frames[0].payload.readUInt16BE(0) === 4401
        if (!ok)
          failures.push(
            `${what}: a socket was opened (${res.frames.map((f) => `${f.op}:${f.payload.toString()}`).join(' | ')})`,
          )
      } else if (res.status !== 401) failures.push(`${what}: ${res.status} ${res.text.slice(0, 200)}`)
      else if (
        !realHandshake(req.method, shape) &&
        shape.name === 'plain' &&
        res.header('www-authenticate') !== 'Bearer'
      )
        failures.push(`${what}: no WWW-Authenticate`)
    })
    expect(failures).toStrictEqual([])
    // The handshake variants did reach the WebSocket refusal (not only plain 401s).
    expect(refusedSockets).toBeGreaterThan(0)
    expect(await stateOf(server.url, ids, [ALICE, BOB])).toStrictEqual(before)
  })

  it("another tenant's token: nothing of Alice's in any answer or frame, nothing of hers changed", async () => {
    // Bob may write his own sessions (the head moves): Alice's changes, list and data may not.
    const before = await stateOf(server.url, ids, [ALICE], false)
    const cases = crossed(OTHER_TENANT)
    const failures: string[] = []
    await inParallel(cases, 6, async ({ req, cred, shape, origin }) => {
      const { res, what } = await sendCrossed({ req, cred, shape, origin })
      noteLeaks(failures, what, res.text)
      if (res.status >= 500) failures.push(`${what}: ${res.status}`)
      // A token in the URL is read on a handshake only: anywhere else it is no credential.
      if (cred.query && !realHandshake(req.method, shape) && !PUBLIC.has(req.label) && res.status !== 401)
        failures.push(`${what}: ${res.status}, not 401`)
    })
    expect(failures).toStrictEqual([])
    expect(await stateOf(server.url, ids, [ALICE], false)).toStrictEqual(before)
  })

  it('anonymous /health answers its status only, and so it does to an authenticated caller', async () => {
    for (const token of [undefined, ALICE]) {
      const res = await fetch(`${server.url}/health`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      })
      expect(await res.json()).toStrictEqual({ status: 'ok' })
    }
  })
})

describe(`no-token mode inside a browser's world, on ${BACKEND.name}`, () => {
  const running = useServer(['--no-fsync'])
  let server: ServerProcess
  let routes: Route[]
  let ids: { session_id: string; attachment_id: string }
  beforeAll(async () => {
    server = running.server
    routes = await routesOfRouter({})
    ids = await plant(server.url)
  })

  const requests = () => routes.flatMap((r) => concrete(r, ids))
  const body = () => Buffer.from(BODY.toString().replaceAll('SID', ids.session_id))
  const port = () => new URL(server.url).port

  it('the local user is served by its loopback names, and an allowed origin may send what a form can', async () => {
    for (const host of [`localhost:${port()}`, `127.0.0.1:${port()}`, `[::1]:${port()}`, 'LOCALHOST']) {
      const res = await send(
        server.url,
        'POST',
        '/rpc/session::get',
        [
          ['Host', host],
          ['Content-Type', 'application/json'],
          ['Connection', 'close'],
        ],
        Buffer.from(JSON.stringify({ session_id: ids.session_id })),
      )
      expect([host, res.status, leaked(res.text).includes('ALICE-SECRET-TITLE')]).toStrictEqual([
        host,
        200,
        true,
      ])
    }
    const { session_id } = await rpc(server.url, 'session::create', { title: 'scratch' })
    const res = await send(
      server.url,
      'POST',
      `/attachments/${session_id}?name=a.txt&mime=text/plain`,
      [
        ['Host', `localhost:${port()}`],
        ['Content-Type', 'text/plain'],
        ['Origin', 'http://localhost:5173'],
        ['Connection', 'close'],
      ],
      Buffer.from('hello'),
    )
    expect(res.status).toBe(200)
    await rpc(server.url, 'session::delete', { session_id })
  })

  it('DNS rebinding: a foreign Host is refused on every route, WebSocket handshakes included; nothing read or written', async () => {
    const before = await stateOf(server.url, ids, [undefined])
    const failures: string[] = []
    const hosts = [
      'evil.example',
      `evil.example:${port()}`,
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      'localhost.',
      '',
    ]
    const cases = requests().flatMap((req) =>
      hosts.flatMap((host) => [SHAPES[0], SHAPES[3]].map((shape) => ({ req, host, shape }))),
    )
    await inParallel(cases, 6, async ({ req, host, shape }) => {
      const headers = [
        ['Host', host] as const,
        ...shape.headers,
        ...(req.method === 'POST' ? [['Content-Type', 'application/json'] as const] : []),
      ]
      const res = await send(
        server.url,
        req.method,
        req.path,
        headers,
        req.method === 'POST' ? body() : undefined,
      )
      const what = `${req.method} ${req.path} | Host ${host} | ${shape.name}`
      noteLeaks(failures, what, res.text)
      // Node itself answers 400 to an empty Host; everything else is the server's 403.
      if (res.status !== 403 && !(host === '' && res.status === 400)) failures.push(`${what}: ${res.status}`)
    })
    expect(failures).toStrictEqual([])
    expect(await stateOf(server.url, ids, [undefined])).toStrictEqual(before)
  })

  it('cross-site writes: every state-changing route refuses a simple Content-Type without an allowed Origin, and any foreign Origin', async () => {
    const before = await stateOf(server.url, ids, [undefined])
    const writes = requests().filter((r) => r.method !== 'GET')
    expect(writes.length).toBeGreaterThan(FUNCTION_IDS.length)
    const variants: ReadonlyArray<{
      name: string
      headers: ReadonlyArray<readonly [string, string]>
      status: number
    }> = [
      {
        name: 'text/plain from evil.example',
        headers: [
          ['Content-Type', 'text/plain'],
          ['Origin', 'https://evil.example'],
        ],
        status: 403,
      },
      { name: 'text/plain, no Origin', headers: [['Content-Type', 'text/plain;charset=UTF-8']], status: 415 },
      {
        name: 'a form, no Origin',
        headers: [['Content-Type', 'application/x-www-form-urlencoded']],
        status: 415,
      },
      {
        name: 'multipart, no Origin',
        headers: [['Content-Type', 'multipart/form-data; boundary=x']],
        status: 415,
      },
      { name: 'no Content-Type, no Origin', headers: [], status: 415 },
      { name: 'odd-cased TEXT/PLAIN, no Origin', headers: [['content-type', ' TEXT/Plain ']], status: 415 },
      {
        name: 'application/json from evil.example',
        headers: [
          ['Content-Type', 'application/json'],
          ['Origin', 'https://evil.example'],
        ],
        status: 403,
      },
      {
        name: 'octet-stream from Origin null',
        headers: [
          ['Content-Type', 'application/octet-stream'],
          ['Origin', 'null'],
        ],
        status: 403,
      },
    ]
    const failures: string[] = []
    await inParallel(
      writes.flatMap((req) => variants.map((v) => ({ req, v }))),
      6,
      async ({ req, v }) => {
        // Without a query and with one (an upload's name and type; other routes ignore it).
        for (const path of [req.path, withQuery(req.path, 'name=x.bin&mime=text/plain')]) {
          const res = await send(
            server.url,
            req.method,
            path,
            [['Host', `127.0.0.1:${port()}`], ['Connection', 'close'], ...v.headers],
            body(),
          )
          const what = `${req.method} ${path} | ${v.name}`
          noteLeaks(failures, what, res.text)
          if (res.status !== v.status)
            failures.push(`${what}: ${res.status}, not ${v.status}: ${res.text.slice(0, 200)}`)
        }
      },
    )
    expect(failures).toStrictEqual([])
    expect(await stateOf(server.url, ids, [undefined])).toStrictEqual(before)
  })
})

describe('failed WebSocket handshakes draw on the per-address limiter, like failed HTTP authentications', () => {
  const running = useServer([
    '--token',
    `alice=${ALICE}`,
    '--requests-per-second',
    '1',
    '--request-burst',
    '5',
  ])
  let server: ServerProcess
  beforeAll(() => {
    server = running.server
  })

  it('guesses over handshakes get 429 past the burst, and then so does HTTP from the same address; a valid caller is not held up', async () => {
    const host = ['Host', new URL(server.url).host] as const
    const answers: number[] = []
    for (let i = 0; i < 12; i++) {
      const res = await send(server.url, 'GET', `/sync/stream?since=0&access_token=guess-${i}`, [
        host,
        ...SHAPES[3].headers,
      ])
      answers.push(res.status === 101 ? res.frames[0]?.payload.readUInt16BE(0) : res.status)
    }
    // The burst (5, plus what refills meanwhile at 1/s) is answered 4401, the rest 429.
    const first429 = answers.indexOf(429)
    expect(first429).toBeGreaterThanOrEqual(5)
    expect(first429).toBeLessThan(9)
    expect(answers.slice(0, 5)).toStrictEqual([4401, 4401, 4401, 4401, 4401])
    expect(answers.slice(-1)).toStrictEqual([429])
    const http = await send(server.url, 'GET', '/sync/pull?since=0', [
      host,
      bearer('guess-http'),
      ['Connection', 'close'],
    ])
    expect([http.status, http.header('retry-after') !== undefined]).toStrictEqual([429, true])
    expect(
      (await send(server.url, 'GET', '/sync/pull?since=0', [host, bearer(ALICE), ['Connection', 'close']]))
        .status,
    ).toBe(200)
  })
})

describe('no tokens on a network address', () => {
  const run = (args: readonly string[]) => {
    const child = spawn(process.execPath, [CLI, '--memory', '--port', '0', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    return {
      child,
      output: () => out,
      exited: new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    }
  }

  it('refuses to start without tokens on 0.0.0.0, saying which flag would allow it', async () => {
    const { exited, output } = run(['--host', '0.0.0.0'])
    expect(await exited).toBe(2)
    expect(output()).toContain('refusing to listen on 0.0.0.0 without tokens')
    expect(output()).toContain('--insecure-no-auth-on-network')
    expect(output()).not.toContain('listening on')
  })

  it('starts with --insecure-no-auth-on-network, warns, and still answers loopback names only', async () => {
    const server = await startServer(['--memory', '--host', '0.0.0.0', '--insecure-no-auth-on-network'])
    try {
      expect(server.output()).toContain('WARNING')
      const port = new URL(server.url).port
      const local = await send(`http://127.0.0.1:${port}`, 'GET', '/sync/pull?since=0', [
        ['Host', `127.0.0.1:${port}`],
        ['Connection', 'close'],
      ])
      expect(local.status).toBe(200)
      const foreign = await send(`http://127.0.0.1:${port}`, 'GET', '/sync/pull?since=0', [
        ['Host', `evil.example:${port}`],
        ['Connection', 'close'],
      ])
      expect(foreign.status).toBe(403)
    } finally {
      await server.stop()
    }
  })

  it('--allowed-host adds a name; tokens need no flag on a network address', async () => {
    const server = await startServer(['--memory', '--allowed-host', 'colloquy.test'])
    try {
      const port = new URL(server.url).port
      expect(
        (
          await send(server.url, 'GET', '/sync/pull?since=0', [
            ['Host', `colloquy.test:${port}`],
            ['Connection', 'close'],
          ])
        ).status,
      ).toBe(200)
      expect(
        (
          await send(server.url, 'GET', '/sync/pull?since=0', [
            ['Host', `other.test:${port}`],
            ['Connection', 'close'],
          ])
        ).status,
      ).toBe(403)
    } finally {
      await server.stop()
    }
    const withTokens = await startServer(['--memory', '--host', '0.0.0.0', '--token', ALICE])
    await withTokens.stop()
  })
})
