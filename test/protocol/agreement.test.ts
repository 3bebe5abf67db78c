import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPushRequest, checkStreamMessage, type StreamMessage } from '@colloquy/core/protocol'
import { checkPull, checkPush, checkStream } from '../../packages/sync/src/answers.js'
import { TransportError } from '../../packages/sync/src/transport.js'
import {
  memoryServer,
  postJson,
  rpc,
  testSocket,
  user,
  type ServerProcess,
  type TestSocket,
} from '../server/helpers.js'

/**
 * The server and the client hold one protocol (`@colloquy/core/protocol`). These tests pin that
 * they agree on a real server process: the server takes exactly the push bodies the protocol's
 * check takes (on both its push routes), refusing the others with the check's own words, and
 * every frame, page and answer the server sends passes the client's checks.
 */

let server: ServerProcess
let url: string
let ws: string
beforeAll(async () => {
  server = await memoryServer()
  url = server.url
  ws = url.replace('http', 'ws')
})
afterAll(() => server?.stop())

const meta = (session_id: string) => ({ session_id, title: session_id, created_at: 1, updated_at: 1 })
const message = (text: string) => ({ role: 'user', content: [{ type: 'text', text }], timestamp: 1 })
const entry = (id: string, parent_id: string | null, revision = 1) => ({
  id,
  parent_id,
  timestamp: 1,
  revision,
  kind: 'message',
  message: message(id),
})

/** What the protocol's check says of a body: undefined (taken) or the refusal's message. */
function checked(body: unknown): string | undefined {
  try {
    checkPushRequest(body)
    return undefined
  } catch (e) {
    expect(e).toMatchObject({ name: 'SessionError', code: 'session/invalid_request' })
    return (e as Error).message
  }
}

type Body = { client_id?: unknown; mutations?: unknown }
type Mutation = { id?: unknown; change?: Record<string, unknown> }

const session = fc.constantFrom('agree-a', 'agree-b', 'agree-c')
const mutation = fc.oneof(
  session.map((s) => ({ type: 'meta', meta: meta(s), create: true })),
  fc.tuple(session, fc.nat(5)).map(([s, i]) => ({
    type: 'entry',
    session_id: s,
    entry: entry(`e${i}`, i ? `e${i - 1}` : null),
    base_revision: null,
  })),
  fc.tuple(session, fc.nat(5)).map(([s, i]) => ({ type: 'leaf', session_id: s, entry_id: `e${i}` })),
  session.map((s) => ({ type: 'delete', session_id: s })),
)
const body = fc
  .tuple(fc.array(mutation, { maxLength: 4 }), fc.oneof(fc.nat(), fc.string({ maxLength: 8 })))
  .map(([changes, first]): Body => ({
    client_id: 'agreement',
    mutations: changes.map((change, i) => ({
      id: typeof first === 'number' ? first + i : `${first}-${i}`,
      change,
    })),
  }))

/** Ways a body leaves the protocol (or stays in it: a negative or string id, an extra field). */
const onBody: Array<(b: Body) => unknown> = [
  () => null,
  () => [],
  () => 'mutations',
  (b) => ({ ...b, mutations: {} }),
  (b) => ({ client_id: b.client_id }),
  (b) => ({ ...b, client_id: 42 }),
  (b) => ({ ...b, client_id: 'q\ud800' }),
  (b) => ({ mutations: b.mutations }),
]
const onMutation: Array<(m: Mutation) => unknown> = [
  () => 7,
  () => null,
  (m) => ({ ...m, id: 1.5 }),
  (m) => ({ ...m, id: 'q\ud800' }),
  (m) => ({ ...m, id: 'x'.repeat(256) }),
  (m) => ({ ...m, id: null }),
  (m) => ({ change: m.change }),
  (m) => ({ ...m, id: -3 }),
  (m) => ({ ...m, id: 'an-id' }),
  (m) => ({ ...m, id: Number.MAX_SAFE_INTEGER + 2 }),
  (m) => ({ id: m.id }),
  (m) => ({ ...m, change: { ...m.change, type: 'nope' } }),
  (m) => ({ ...m, change: { ...m.change, session_id: 42 } }),
  (m) => ({ ...m, change: { ...m.change, entry: entry('e9', 'p'.repeat(3000)) } }),
  (m) => ({ ...m, extra: true }),
]
const corrupted = fc
  .tuple(
    body,
    fc.option(fc.oneof(fc.constantFrom(...onBody), fc.tuple(fc.constantFrom(...onMutation), fc.nat()))),
    fc.nat(),
  )
  .map(([b, how]) => {
    if (how === null) return b
    if (typeof how === 'function') return how(b)
    const [f, at] = how
    const list = b.mutations as Mutation[]
    if (!list.length) return b
    return { ...b, mutations: list.map((m, i) => (i === at % list.length ? f(m) : m)) }
  })

describe('the server and the client accept exactly the same messages', () => {
  it('a push body: the server takes it on POST /sync/push and on the stream exactly when the protocol check does, refusing with its words', async () => {
    const s = await testSocket(`${ws}/sync/stream?since=0`)
    let n = 0
    let refusals = 0
    await fc.assert(
      fc.asyncProperty(corrupted, async (b) => {
        const verdict = checked(b)
        const res = await postJson(`${url}/sync/push`, b)
        const answer = (await res.json()) as {
          results?: unknown[]
          error?: { code: string; message: string }
        }
        if (verdict === undefined) {
          expect(res.status).toBe(200)
          expect(answer.results).toHaveLength((b as { mutations: unknown[] }).mutations.length)
        } else {
          refusals++
          expect(res.status).toBe(400)
          expect(answer.error).toStrictEqual({ code: 'session/invalid_request', message: verdict })
        }
        // The same body as a push on the live stream (a frame is an object: others are not pushes).
        if (typeof b !== 'object' || b === null || Array.isArray(b)) return
        const id = `push-${++n}`
        s.send({ ...b, type: 'push', id })
        const reply = await s.next((m) => (m.type === 'pushed' || m.type === 'error') && m.id === id)
        if (verdict === undefined) expect(reply.type).toBe('pushed')
        else
          expect(reply).toMatchObject({
            type: 'error',
            error: { code: 'session/invalid_request', message: verdict },
          })
      }),
      { numRuns: 60 },
    )
    // The generator reaches both sides of the line.
    expect(refusals).toBeGreaterThan(5)
    expect(refusals).toBeLessThan(55)
    s.close()
  })

  it("every frame, pull page and push answer a real server sends over a few operations passes the client's checks", async () => {
    const frames: unknown[] = []
    const watch = async (since: number): Promise<TestSocket> => {
      const s = await testSocket(`${ws}/sync/stream?since=${since}`)
      const seen = s.messages
      // The socket's own list: collected at the end.
      sockets.push(seen)
      return s
    }
    const sockets: unknown[][] = []
    const s = await watch(0)
    await s.next((m) => m.type === 'ready')

    // Pushes over HTTP: applied, unchanged (a retry), rejected (a leaf on a missing entry), conflict (a stale base).
    const sid = 'frames'
    const first = [
      { id: 1, change: { type: 'meta', meta: meta(sid), create: true } },
      { id: 2, change: { type: 'entry', session_id: sid, entry: entry('a', null), base_revision: null } },
      { id: 3, change: { type: 'entry', session_id: sid, entry: entry('b', 'a'), base_revision: null } },
      { id: 'leaf-1', change: { type: 'leaf', session_id: sid, entry_id: 'b' } },
    ]
    const answers: Array<{ ids: unknown[]; body: unknown }> = []
    const push = async (mutations: Array<{ id: unknown; change: unknown }>): Promise<any> => {
      const res = await postJson(`${url}/sync/push`, { client_id: 'frames', mutations })
      expect(res.status).toBe(200)
      const body = await res.json()
      answers.push({ ids: mutations.map((m) => m.id), body })
      return body
    }
    await push(first)
    await push(first)
    await push([
      { id: 5, change: { type: 'entry', session_id: sid, entry: entry('a', null, 2), base_revision: 1 } },
    ])
    const stale = await push([
      { id: 6, change: { type: 'entry', session_id: sid, entry: entry('a', null, 3), base_revision: 1 } },
      { id: 7, change: { type: 'leaf', session_id: sid, entry_id: 'missing' } },
    ])
    expect(stale.results.map((r: { status: string }) => r.status)).toStrictEqual(['conflict', 'rejected'])

    // On the stream: a push (pushed), a ping (pong), refusals (error, with and without an id).
    s.send({
      type: 'push',
      id: 'p1',
      client_id: 'frames',
      mutations: [
        { id: 8, change: { type: 'entry', session_id: sid, entry: entry('c', 'b'), base_revision: null } },
      ],
    })
    await s.next((m) => m.type === 'pushed' && m.id === 'p1')
    s.send({ type: 'push', id: 'p2', mutations: [{ id: 1.5, change: { type: 'delete', session_id: sid } }] })
    await s.next((m) => m.type === 'error' && m.id === 'p2')
    s.send({ type: 'subscribe', id: 'p3' })
    await s.next((m) => m.type === 'error' && m.id === 'p3')
    s.send('not json' as never)
    await s.next((m) => m.type === 'error' && m.id === undefined)

    // Writes through the RPC: a meta change, an append, a deletion.
    const { session_id } = await rpc(url, 'session::create', { title: 'rpc' })
    await rpc(url, 'session::append', { session_id, message: user('one') })
    await rpc(url, 'session::set-meta', { session_id, title: 'renamed' })
    await rpc(url, 'session::delete', { session_id })
    await s.sync()

    // A cursor the server cannot serve: the stream resets, then sends everything from 0.
    const ahead = await watch(1_000_000)
    await ahead.next((m) => m.type === 'reset')
    await ahead.next((m) => m.type === 'ready')
    ahead.close()
    s.close()

    // Pull, page by page, and a reset page.
    const pages: Array<{ since: number; page: unknown }> = []
    for (let since = 0; ;) {
      const page = await (await fetch(`${url}/sync/pull?since=${since}&limit=2`)).json()
      pages.push({ since, page })
      if (!page.more) break
      since = page.checkpoint
    }
    pages.push({ since: 1_000_000, page: await (await fetch(`${url}/sync/pull?since=1000000`)).json() })
    expect(pages.at(-1)!.page).toMatchObject({ reset: true })

    for (const list of sockets) frames.push(...list)
    const types = new Set(frames.map((f) => (f as StreamMessage).type))
    expect([...types].sort()).toStrictEqual(['changes', 'error', 'pong', 'pushed', 'ready', 'reset'])
    for (const f of frames) {
      // The protocol takes every frame; the client acts on each, and closes on `error` as a refusal, never as malformed.
      expect(() => checkStreamMessage(f), JSON.stringify(f)).not.toThrow()
      const m = checkStream(f)
      if ((f as StreamMessage).type === 'error')
        expect(m, JSON.stringify(f)).toMatchObject({
          name: 'TransportError',
          message: expect.stringMatching(/^stream: /),
        })
      else expect(m, JSON.stringify(f)).not.toBeInstanceOf(TransportError)
    }
    for (const { since, page } of pages)
      expect(() => checkPull(page, since), JSON.stringify(page)).not.toThrow()
    for (const { ids, body } of answers)
      expect(() => checkPush(body, ids as Array<number | string>), JSON.stringify(body)).not.toThrow()
  })

  it("a rate-limit refusal on the stream (with retry_after_ms) passes the client's check as a refusal", async () => {
    const limited = await memoryServer(['--requests-per-second', '1', '--request-burst', '3'])
    try {
      const s = await testSocket(`${limited.url.replace('http', 'ws')}/sync/stream?since=0`)
      for (let i = 0; i < 6; i++) s.send({ type: 'ping', id: i })
      const refusal = await s.next((m) => m.type === 'error')
      expect(refusal.retry_after_ms).toBeGreaterThan(0)
      expect(() => checkStreamMessage(refusal)).not.toThrow()
      expect(checkStream(refusal)).toMatchObject({
        name: 'TransportError',
        message: expect.stringMatching(/^stream: /),
      })
      s.close()
    } finally {
      await limited.stop()
    }
  })
})
