import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from '../../packages/server/test/ws.js'
import {
  currentDataBackend,
  postJson,
  rpc,
  startServer,
  storageArgs,
  testSocket,
  user,
  type ServerProcess,
} from './helpers.js'

// The server's limits against a real process on its file storage: bounded parsing, and the
// per-principal request rate, WebSockets, sessions and stored bytes.
const ALICE = 'tok-alice'
const BOB = 'tok-bob'
const tokens = ['--token', `alice=${ALICE}`, '--token', `bob=${BOB}`]
const ws = (url: string, path: string) => `${url.replace(/^http/, 'ws')}${path}`
const code = async (res: Response): Promise<[number, string | undefined]> => [
  res.status,
  ((await res.json()) as { error?: { code: string } }).error?.code,
]

describe('bounded parsing', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer([...(await storageArgs()), ...tokens])
  })
  afterAll(() => server?.stop())

  it('a body nested 100,000 deep, an array, an object or a string over its limit is a 400 on every endpoint, never a 500', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    const bodies = [
      `{"session_id":"s","metadata":{"k":${deep}}}`,
      deep,
      `{"mutations":[${new Array(100_001).fill('0').join(',')}]}`,
      `{"metadata":{${Array.from({ length: 10_001 }, (_, i) => `"k${i}":0`).join(',')}}}`,
      `{"title":"${'t'.repeat(1024 * 1024 + 1)}"}`,
    ]
    for (const path of ['/rpc/session::ensure', '/rpc/session::create', '/rpc/session::list', '/sync/push']) {
      for (const body of bodies) {
        const res = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
          body,
        })
        expect([path, body.length, ...(await code(res))]).toStrictEqual([
          path,
          body.length,
          400,
          'session/invalid_request',
        ])
      }
    }
    expect(await rpc(server.url, 'session::list', {}, ALICE)).toStrictEqual({ sessions: [] })
  })

  it("a WebSocket message over a limit gets an error frame with the contract's shape; the socket stays usable", async () => {
    for (const path of ['/sync/stream?since=0', '/events']) {
      const raw = '{"type":"ping","id":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}'
      const socket = new WebSocket(ws(server.url, path), { headers: { authorization: `Bearer ${ALICE}` } })
      const frames: any[] = []
      socket.on('message', (d) => frames.push(JSON.parse(d.toString())))
      await new Promise((r) => socket.once('open', r))
      socket.send(raw)
      socket.send(JSON.stringify({ type: 'ping', id: 'after' }))
      await expect.poll(() => frames.find((f) => f.type === 'pong')).toBeTruthy()
      expect(frames.find((f) => f.type === 'error')).toMatchObject({
        type: 'error',
        error: {
          code: 'session/invalid_request',
          message: expect.stringMatching(
            /^session\/invalid_request: id\[0\]\[0\].*: JSON nested deeper than 64 levels$/,
          ),
        },
      })
      socket.close()
    }
  })
})

/**
 * A server with `limits` over the current data backend, whose data (a directory, or a database
 * on PostgreSQL) is kept across `killAndRestart` within its describe block.
 */
function useKeptServer(limits: readonly string[]): { readonly url: string; killAndRestart(): Promise<void> } {
  let server: ServerProcess | undefined
  let dir: { args: readonly string[]; remove(): Promise<void> } | undefined
  const start = async () => (server = await startServer([...dir!.args, '--no-fsync', ...tokens, ...limits]))
  beforeAll(async () => {
    dir = await currentDataBackend().data()
    await start()
  })
  afterAll(async () => {
    await server?.stop()
    await dir?.remove()
  })
  return {
    get url() {
      return server!.url
    },
    async killAndRestart() {
      await server!.stop('SIGKILL')
      await start()
    },
  }
}

describe('per-principal limits', () => {
  const server = useKeptServer(['--max-sockets', '2', '--max-sessions', '3', '--max-stored-bytes', '20000'])

  it('a principal holds at most --max-sockets WebSockets; the next is closed with 4429, others are not affected', async () => {
    const a1 = await testSocket(ws(server.url, '/sync/stream?since=0'), ALICE)
    const a2 = await testSocket(ws(server.url, '/events'), ALICE)
    const a3 = await testSocket(ws(server.url, '/events'), ALICE)
    expect((await a3.closed).code).toBe(4429)
    const b = await testSocket(ws(server.url, '/events'), BOB)
    await b.sync()
    a1.close()
    await a1.closed
    const again = await testSocket(ws(server.url, '/events'), ALICE)
    await again.sync()
    for (const s of [a2, b, again]) s.close()
  })

  it('sessions over --max-sessions are refused with 403 (rpc and push), nothing written; deleting one makes room', async () => {
    for (const id of ['s1', 's2', 's3']) await rpc(server.url, 'session::ensure', { session_id: id }, ALICE)
    expect(await code(await postJson(`${server.url}/rpc/session::create`, {}, ALICE))).toStrictEqual([
      403,
      'session/invalid_request',
    ])
    expect(
      await code(await postJson(`${server.url}/rpc/session::ensure`, { session_id: 's4' }, ALICE)),
    ).toStrictEqual([403, 'session/invalid_request'])
    const meta = {
      session_id: 's4',
      title: '',
      description: '',
      status: 'idle',
      kind: 'user',
      created_at: 1,
      updated_at: 1,
      message_count: 0,
    }
    expect(
      await code(
        await postJson(
          `${server.url}/sync/push`,
          { mutations: [{ id: 1, change: { type: 'meta', meta, create: true } }] },
          ALICE,
        ),
      ),
    ).toStrictEqual([403, 'session/invalid_request'])
    // An existing session is still ensured; the other principal is not affected.
    expect((await rpc(server.url, 'session::ensure', { session_id: 's1' }, ALICE)).created).toBe(false)
    await rpc(server.url, 'session::ensure', { session_id: 'b1' }, BOB)
    expect(
      (await rpc(server.url, 'session::list', {}, ALICE)).sessions
        .map((s: { session_id: string }) => s.session_id)
        .sort(),
    ).toStrictEqual(['s1', 's2', 's3'])
    await rpc(server.url, 'session::delete', { session_id: 's3' }, ALICE)
    await rpc(server.url, 'session::ensure', { session_id: 's4' }, ALICE)
  })

  it('a write that would pass --max-stored-bytes is refused with 403 and not written, across a restart; deleting frees the bytes', async () => {
    const text = 'x'.repeat(3000)
    let appended = 0
    for (;;) {
      const res = await postJson(
        `${server.url}/rpc/session::append`,
        { session_id: 's1', message: user(text) },
        ALICE,
      )
      if (res.status !== 200) {
        expect(await code(res)).toStrictEqual([403, 'session/invalid_request'])
        break
      }
      appended++
      expect(appended).toBeLessThan(10)
    }
    expect(appended).toBeGreaterThan(3)
    expect((await rpc(server.url, 'session::messages', { session_id: 's1' }, ALICE)).messages).toHaveLength(
      appended,
    )
    // Bob has his own quota.
    await rpc(server.url, 'session::append', { session_id: 'b1', message: user(text) }, BOB)

    await server.killAndRestart()
    const res = await postJson(
      `${server.url}/rpc/session::append`,
      { session_id: 's1', message: user(text) },
      ALICE,
    )
    expect(await code(res)).toStrictEqual([403, 'session/invalid_request'])
    expect((await rpc(server.url, 'session::messages', { session_id: 's1' }, ALICE)).messages).toHaveLength(
      appended,
    )
    await rpc(server.url, 'session::delete', { session_id: 's1' }, ALICE)
    await rpc(server.url, 'session::append', { session_id: 's2', message: user(text) }, ALICE)
  })
})

describe('attachment bytes count toward --max-stored-bytes', () => {
  const server = useKeptServer(['--max-stored-bytes', '50000'])
  const upload = (session_id: string, bytes: number, token: string) =>
    fetch(`${server.url}/attachments/${session_id}?name=blob.bin`, {
      method: 'POST',
      body: new Uint8Array(bytes).fill(7),
      headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${token}` },
    })

  it('a streamed upload past the quota is refused with 403 and stored nowhere, across a restart; deleting it frees the bytes', async () => {
    await rpc(server.url, 'session::ensure', { session_id: 'files' }, ALICE)
    const first = await upload('files', 30_000, ALICE)
    expect(first.status).toBe(200)
    const { attachment } = (await first.json()) as { attachment: { attachment_id: string } }
    expect(await code(await upload('files', 30_000, ALICE))).toStrictEqual([403, 'session/invalid_request'])
    // The RPC's base64 form is held to the same quota.
    const b64 = Buffer.from(new Uint8Array(30_000)).toString('base64')
    expect(
      await code(
        await postJson(
          `${server.url}/rpc/session::put-attachment`,
          { session_id: 'files', name: 'b.bin', mime: 'application/octet-stream', data: b64 },
          ALICE,
        ),
      ),
    ).toStrictEqual([403, 'session/invalid_request'])
    expect(
      (await rpc(server.url, 'session::list-attachments', { session_id: 'files' }, ALICE)).attachments,
    ).toHaveLength(1)
    // Bob has his own quota.
    await rpc(server.url, 'session::ensure', { session_id: 'bobs' }, BOB)
    expect((await upload('bobs', 30_000, BOB)).status).toBe(200)

    // Counted again from what is stored when the server restarts.
    await server.killAndRestart()
    expect(await code(await upload('files', 30_000, ALICE))).toStrictEqual([403, 'session/invalid_request'])
    await rpc(
      server.url,
      'session::delete-attachment',
      { session_id: 'files', attachment_id: attachment.attachment_id },
      ALICE,
    )
    expect((await upload('files', 30_000, ALICE)).status).toBe(200)
  })
})

describe('request rate', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer([
      ...(await storageArgs()),
      ...tokens,
      '--requests-per-second',
      '1',
      '--request-burst',
      '2',
    ])
  })
  afterAll(() => server?.stop())

  it('past its burst a principal gets 429 with Retry-After; the other principal does not; WebSocket messages count too', async () => {
    expect((await postJson(`${server.url}/rpc/session::list`, {}, ALICE)).status).toBe(200)
    expect((await postJson(`${server.url}/rpc/session::list`, {}, ALICE)).status).toBe(200)
    const res = await postJson(`${server.url}/rpc/session::list`, {}, ALICE)
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('http/too_many_requests')
    expect((await postJson(`${server.url}/rpc/session::list`, {}, BOB)).status).toBe(200)
    // Guessing tokens: failed authentications are limited per client address.
    const guesses = []
    for (let i = 0; i < 4; i++)
      guesses.push((await postJson(`${server.url}/rpc/session::list`, {}, `guess-${i}`)).status)
    expect(guesses).toStrictEqual([401, 401, 429, 429])

    await new Promise((r) => setTimeout(r, 1100))
    const s = await testSocket(ws(server.url, '/events'), BOB)
    for (let i = 0; i < 4; i++) s.send({ type: 'ping', id: i })
    await s.next((m) => m.type === 'error')
    expect(s.messages.find((m) => m.type === 'error')).toMatchObject({
      error: { code: 'http/too_many_requests' },
      retry_after_ms: expect.any(Number),
    })
    expect(s.messages.filter((m) => m.type === 'pong').length).toBeLessThan(4)
    s.close()
  })
})

describe('a WebSocket client that stops reading', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer([...(await storageArgs()), ...tokens, '--max-buffered-bytes', '65536'])
  })
  afterAll(() => server?.stop())

  it('is disconnected with 1013 before the server has buffered everything for it', async () => {
    const text = 'y'.repeat(100_000)
    await rpc(server.url, 'session::ensure', { session_id: 'big' }, ALICE)
    const socket = new WebSocket(ws(server.url, '/sync/stream?since=0'), {
      headers: { authorization: `Bearer ${ALICE}` },
    })
    let received = 0
    const ready = new Promise((r) =>
      socket.on(
        'message',
        (d) => ((received += (d as Buffer).length), d.toString().includes('"ready"') && r(undefined)),
      ),
    )
    await ready
    // Stop reading: the kernel buffers fill, then the server's.
    const raw = (socket as unknown as { _socket: { pause(): void; resume(): void } })._socket
    raw.pause()
    let sent = 0
    for (let i = 0; i < 150; i++) {
      await rpc(server.url, 'session::append', { session_id: 'big', message: user(`${i}${text}`) }, ALICE)
      sent += text.length
    }
    raw.resume()
    const closed = await new Promise<number>((r) => socket.once('close', (c) => r(c)))
    expect(closed).toBe(1013)
    // Loopback socket buffers hold a few MB; the server held at most 64 KiB more.
    expect(received).toBeLessThan(sent * 0.8)
  })
})

describe('event subscriptions', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer([...(await storageArgs()), ...tokens])
  })
  afterAll(() => server?.stop())

  it('a socket holds at most 256 subscriptions; re-subscribing an id replaces it', async () => {
    const s = await testSocket(ws(server.url, '/events'), ALICE)
    for (let i = 0; i < 257; i++)
      s.send({ type: 'subscribe', id: i, trigger_type: 'session::created', config: {} })
    s.send({ type: 'subscribe', id: 0, trigger_type: 'session::created', config: {} })
    await s.sync()
    expect(s.messages.filter((m) => m.type === 'subscribed')).toHaveLength(257)
    expect(s.messages.filter((m) => m.type === 'error')).toMatchObject([
      { id: 256, error: { code: 'session/invalid_request' } },
    ])
    s.close()
  })
})
