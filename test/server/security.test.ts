import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  failure,
  postJson,
  pull,
  pullAll,
  pushChanges,
  rpc,
  startServer,
  storageArgs,
  testSocket,
  user,
  type ServerProcess,
} from './helpers.js'

const ALICE = 'tok-alice'
const BOB = 'tok-bob'

let server: ServerProcess
let url: string
let secret: string
beforeAll(async () => {
  server = await startServer([
    ...(await storageArgs()),
    '--token',
    `alice=${ALICE}`,
    '--token',
    `bob=${BOB}`,
    '--max-body-bytes',
    '65536',
    '--max-batch',
    '50',
  ])
  url = server.url
  secret = (await rpc(url, 'session::create', { title: 'alice private' }, ALICE)).session_id
  await rpc(
    url,
    'session::append',
    { session_id: secret, entry_id: 'a1', message: user('the secret plan') },
    ALICE,
  )
})
afterAll(() => server?.stop())

const status = async (res: Response): Promise<[number, string | undefined]> => [
  res.status,
  ((await res.json()) as { error?: { code: string } }).error?.code,
]
const get = (path: string, token?: string) =>
  fetch(`${url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
const snapshotOf = async (token: string) => ({
  list: await rpc(url, 'session::list', {}, token),
  messages: await rpc(url, 'session::messages', { session_id: secret }, token),
  head: (await pull(url, 0, 1, token)).head,
})

describe('authentication', () => {
  it('no token, or a wrong one, gets 401 on every protected endpoint; health and meta stay public', async () => {
    for (const token of [undefined, 'nope']) {
      expect(await status(await postJson(`${url}/rpc/session::list`, {}, token))).toStrictEqual([
        401,
        'auth/unauthorized',
      ])
      expect(await status(await postJson(`${url}/sync/push`, { mutations: [] }, token))).toStrictEqual([
        401,
        'auth/unauthorized',
      ])
      expect(await status(await get('/sync/pull?since=0', token))).toStrictEqual([401, 'auth/unauthorized'])
      expect(await status(await get(`/sessions/${secret}/history`, token))).toStrictEqual([
        401,
        'auth/unauthorized',
      ])
    }
    expect((await get('/health')).status).toBe(200)
    expect((await get('/meta')).status).toBe(200)
  })

  it('a WebSocket without credentials is closed with 4401 before anything is sent', async () => {
    for (const path of ['/sync/stream?since=0', '/events']) {
      const ws = await testSocket(`${url.replace('http', 'ws')}${path}`)
      expect((await ws.closed).code).toBe(4401)
      expect(ws.messages).toStrictEqual([])
    }
  })

  it('the token may travel as ?access_token= (browsers cannot set WebSocket headers)', async () => {
    const ws = await testSocket(`${url.replace('http', 'ws')}/sync/stream?since=0&access_token=${ALICE}`)
    await ws.next((m) => m.type === 'ready')
    expect(JSON.stringify(ws.messages)).toContain('the secret plan')
    ws.close()
  })
})

describe("tenancy: a second principal cannot touch the first one's sessions", () => {
  it('the server sets metadata.owner and refuses changing it', async () => {
    expect((await rpc(url, 'session::get', { session_id: secret }, ALICE)).meta.metadata).toStrictEqual({
      owner: 'alice',
    })
    await expect(
      rpc(url, 'session::set-meta', { session_id: secret, metadata: { owner: 'bob' } }, ALICE),
    ).rejects.toMatchObject({ code: 'session/invalid_request' })
    await expect(rpc(url, 'session::create', { metadata: { owner: 'bob' } }, ALICE)).rejects.toMatchObject({
      code: 'session/invalid_request',
    })
    const { meta } = await rpc(
      url,
      'session::set-meta',
      { session_id: secret, metadata: { tag: 'x' } },
      ALICE,
    )
    expect(meta.metadata).toStrictEqual({ tag: 'x', owner: 'alice' })
  })

  it('cannot list, read, write, fork, ensure or delete them: they answer as unknown sessions', async () => {
    const before = await snapshotOf(ALICE)
    expect((await rpc(url, 'session::list', {}, BOB)).sessions).toStrictEqual([])
    expect((await rpc(url, 'session::list', { metadata: { owner: 'alice' } }, BOB)).sessions).toStrictEqual(
      [],
    )
    expect(await rpc(url, 'session::get', { session_id: secret }, BOB)).toBeNull()
    expect(await rpc(url, 'session::get-message', { session_id: secret, entry_id: 'a1' }, BOB)).toBeNull()
    expect(await rpc(url, 'session::delete', { session_id: secret }, BOB)).toStrictEqual({ deleted: false })
    for (const [fn, req] of [
      ['session::messages', {}],
      ['session::append', { message: user('injected') }],
      ['session::append-many', { messages: [user('injected')] }],
      ['session::update-message', { entry_id: 'a1', content: [] }],
      ['session::set-meta', { title: 'pwned' }],
      ['session::set-status', { status: 'error' }],
      ['session::set-active-leaf', { entry_id: 'a1' }],
      ['session::fork', { entry_id: 'a1' }],
      ['session::ensure', {}],
    ] as const) {
      const res = await postJson(`${url}/rpc/${fn}`, { session_id: secret, ...req }, BOB)
      expect([fn, ...(await status(res))]).toStrictEqual([fn, 404, 'session/not_found'])
    }
    expect(await status(await get(`/sessions/${secret}/history`, BOB))).toStrictEqual([
      404,
      'session/not_found',
    ])
    expect(await snapshotOf(ALICE)).toStrictEqual(before)
  })

  it('cannot push into them', async () => {
    const before = await snapshotOf(ALICE)
    const meta = (await rpc(url, 'session::get', { session_id: secret }, ALICE)).meta
    const entry = {
      id: 'b1',
      parent_id: 'a1',
      timestamp: 1,
      revision: 0,
      kind: 'message',
      message: user('injected'),
    }
    const results = await pushChanges(
      url,
      [
        { type: 'meta', meta: { ...meta, title: 'pwned', metadata: {} } },
        { type: 'meta', meta: { ...meta, title: 'pwned', metadata: {} }, create: true },
        { type: 'entry', session_id: secret, entry: entry as never, base_revision: null },
        {
          type: 'entry',
          session_id: secret,
          entry: { ...entry, id: 'a1', revision: 9 } as never,
          base_revision: 0,
        },
        { type: 'leaf', session_id: secret, entry_id: null },
        { type: 'delete', session_id: secret },
      ],
      BOB,
    )
    expect(results.map((r) => [r.status, 'code' in r ? r.code : undefined])).toStrictEqual([
      ['rejected', 'session/not_found'],
      ['rejected', 'session/not_found'],
      ['rejected', 'session/not_found'],
      ['rejected', 'session/not_found'],
      ['rejected', 'session/not_found'],
      ['unchanged', undefined],
    ])
    expect(await snapshotOf(ALICE)).toStrictEqual(before)
  })

  it('cannot pull them, and cannot see them on the live stream or the event stream', async () => {
    const stream = await testSocket(`${url.replace('http', 'ws')}/sync/stream?since=0`, BOB)
    const events = await testSocket(`${url.replace('http', 'ws')}/events`, BOB)
    events.send({ type: 'subscribe', id: 1, trigger_type: 'session::message-added', config: {} })
    events.send({
      type: 'subscribe',
      id: 2,
      trigger_type: 'session::created',
      config: { metadata: { owner: 'alice' } },
    })
    await events.next((m) => m.type === 'subscribed' && m.id === 2)
    await stream.next((m) => m.type === 'ready')
    await rpc(url, 'session::append', { session_id: secret, message: user('more secrets') }, ALICE)
    await rpc(url, 'session::create', { title: 'another alice session' }, ALICE)
    // Bob's own session shows up, so the streams do work for him.
    const mine = (await rpc(url, 'session::create', { title: 'bob here' }, BOB)).session_id
    await stream.next((m) => m.type === 'changes' && JSON.stringify(m).includes(mine))
    await events.sync()
    await stream.sync()
    const { changes } = await pullAll(url, 0, 2, BOB)
    for (const seen of [
      JSON.stringify(changes),
      JSON.stringify(stream.messages),
      JSON.stringify(events.messages),
    ]) {
      expect(seen).not.toContain(secret)
      expect(seen).not.toContain('secret')
      expect(seen).not.toContain('alice')
    }
    expect(
      changes.every(
        (c) => (c.change.type === 'meta' ? c.change.meta.metadata : undefined)?.owner !== 'alice',
      ),
    ).toBe(true)
    stream.close()
    events.close()
  })
})

describe('bounded and validated input: nothing is written', () => {
  it('an oversized body gets 413, a push with too many mutations 413', async () => {
    const before = await snapshotOf(ALICE)
    const big = 'x'.repeat(70_000)
    expect(
      await status(
        await postJson(`${url}/rpc/session::append`, { session_id: secret, message: user(big) }, ALICE),
      ),
    ).toStrictEqual([413, 'session/invalid_request'])
    expect(
      await status(
        await postJson(
          `${url}/sync/push`,
          { mutations: [{ id: 1, change: { type: 'delete', session_id: secret } }], pad: big },
          ALICE,
        ),
      ),
    ).toStrictEqual([413, 'session/invalid_request'])
    const many = Array.from({ length: 51 }, (_, i) => ({
      id: i,
      change: { type: 'delete', session_id: secret },
    }))
    expect(await status(await postJson(`${url}/sync/push`, { mutations: many }, ALICE))).toStrictEqual([
      413,
      'session/invalid_request',
    ])
    expect(await snapshotOf(ALICE)).toStrictEqual(before)
  })

  it("malformed JSON, a wrong content type and schema violations get 400/415 with the contract's code", async () => {
    const before = await snapshotOf(ALICE)
    const raw = (path: string, body: string, type = 'application/json') =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': type, authorization: `Bearer ${ALICE}` },
        body,
      })
    expect(await status(await raw('/rpc/session::append', '{"session_id":'))).toStrictEqual([
      400,
      'session/invalid_request',
    ])
    expect(await status(await raw('/sync/push', '[1,2'))).toStrictEqual([400, 'session/invalid_request'])
    expect(
      await status(await raw('/rpc/session::delete', JSON.stringify({ session_id: secret }), 'text/plain')),
    ).toStrictEqual([415, 'session/invalid_request'])
    expect(await status(await raw('/rpc/session::create', JSON.stringify({ title: 12345 })))).toStrictEqual([
      400,
      'session/invalid_request',
    ])
    expect(await status(await raw('/rpc/session::nope', '{}'))).toStrictEqual([
      404,
      'session/invalid_request',
    ])
    // One bad mutation fails the whole push before any is applied.
    const good = { id: 1, change: { type: 'delete', session_id: secret } }
    const bad = {
      id: 2,
      change: {
        type: 'entry',
        session_id: secret,
        entry: { id: 'z', kind: 'message', message: { role: 'robot' } },
      },
    }
    expect(await status(await raw('/sync/push', JSON.stringify({ mutations: [good, bad] })))).toStrictEqual([
      400,
      'session/invalid_request',
    ])
    expect(await status(await get('/sync/pull?since=-1', ALICE))).toStrictEqual([
      400,
      'session/invalid_request',
    ])
    expect(await snapshotOf(ALICE)).toStrictEqual(before)
  })

  it('a WebSocket message over the body limit closes the connection (1009), nothing applied', async () => {
    const before = await snapshotOf(ALICE)
    const ws = await testSocket(`${url.replace('http', 'ws')}/sync/stream?since=0`, ALICE)
    ws.send({
      type: 'push',
      id: 1,
      mutations: [{ id: 1, change: { type: 'delete', session_id: secret } }],
      pad: 'x'.repeat(70_000),
    })
    expect((await ws.closed).code).toBe(1009)
    expect(await snapshotOf(ALICE)).toStrictEqual(before)
  })
})

describe('browser origins', () => {
  it("an open (no auth) server only answers localhost pages, and refuses other origins' WebSockets", async () => {
    const open = await startServer([...(await storageArgs())])
    try {
      const ask = (origin: string) =>
        fetch(`${open.url}/rpc/session::list`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST' },
        })
      expect((await ask('http://localhost:5173')).headers.get('access-control-allow-origin')).toBe(
        'http://localhost:5173',
      )
      expect((await ask('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull()
      const { WebSocket } = await import('../../packages/server/test/ws.js')
      const refused = await new Promise<number>((resolve) => {
        const ws = new WebSocket(`${open.url.replace('http', 'ws')}/events`, {
          origin: 'https://evil.example',
        })
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
        ws.once('open', () => resolve(101))
      })
      expect(refused).toBe(403)
    } finally {
      await open.stop()
    }
  })
})

void failure
