import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { cleanupAfterEach, startServer, type ServerProcess } from './helpers.js'

// `POST /sync/push` is one route of the app, behind the one gate, for programs and pages alike:
// a push from a page (an allowed Origin, so CORS) and the same push from a program (no Origin)
// must be answered alike, good or bad, whatever the body's shape.
const { defer } = cleanupAfterEach('push-route')

async function serve(...args: string[]): Promise<ServerProcess> {
  const s = await startServer(['--memory', '--token', 'alice=tok-a', '--token', 'bob=tok-b', ...args])
  defer(() => s.stop())
  return s
}

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: unknown
}

/** One raw HTTP request (fetch would add an Origin-free but otherwise different request shape). */
function send(
  url: string,
  path: string,
  body: string,
  headers: Record<string, string>,
  agent?: Agent,
): Promise<Answer & { reused: boolean }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: text ? JSON.parse(text) : undefined,
            reused: req.reusedSocket,
          })
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const json = { 'content-type': 'application/json' }
const as = (token: string) => ({ ...json, authorization: `Bearer ${token}` })
const meta = (session_id: string) => ({
  session_id,
  title: session_id,
  description: '',
  status: 'idle',
  kind: 'user',
  created_at: 1,
  updated_at: 1,
  message_count: 0,
})
const create = (session_id: string) =>
  JSON.stringify({ mutations: [{ id: 1, change: { type: 'meta', meta: meta(session_id), create: true } }] })
const append = (session_id: string, id: string) =>
  JSON.stringify({
    mutations: [
      {
        id: 7,
        change: {
          type: 'entry',
          session_id,
          entry: {
            id,
            parent_id: null,
            timestamp: 1,
            revision: 0,
            kind: 'message',
            message: { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 1 },
          },
          base_revision: null,
        },
      },
      { id: 'k', change: { type: 'leaf', session_id, entry_id: id } },
    ],
  })

/** What must be equal on both paths: the status, the body, and the headers that carry meaning. */
const essence = (a: Answer) => ({
  status: a.status,
  // A 429's `retry_after_ms` is the wait left at that moment: a number, not the same one twice.
  body:
    typeof (a.body as { retry_after_ms?: unknown } | null)?.retry_after_ms === 'number'
      ? { ...(a.body as object), retry_after_ms: 'a number' }
      : a.body,
  type: a.headers['content-type'],
  retryAfter: a.headers['retry-after'],
  authenticate: a.headers['www-authenticate'],
  connection: a.headers.connection,
})

const PAGE = 'https://app.example'

/** Sends the same request as a program and as a page (`body` may give each its own session). */
async function both(
  url: string,
  body: (via: 'program' | 'page') => string,
  headers: Record<string, string>,
): Promise<[Answer, Answer]> {
  const program = await send(url, '/sync/push', body('program'), headers)
  const page = await send(url, '/sync/push', body('page'), { ...headers, origin: PAGE })
  expect(page.headers['access-control-allow-origin']).toBe(PAGE)
  return [program, page]
}

describe('POST /sync/push', () => {
  it('answers good pushes and every refusal alike to a program and to a page', async () => {
    const s = await serve('--max-body-bytes', '2000', '--max-json-depth', '8', '--origin', PAGE)
    // Creations and appends, each on a session of its own per path: the seqs differ, nothing else.
    const created = await both(s.url, (via) => create(`s-${via}`), as('tok-a'))
    const appended = await both(s.url, (via) => append(`s-${via}`, 'e1'), as('tok-a'))
    for (const pair of [created, appended]) {
      const [program, page] = pair.map((a) => ({
        ...essence(a),
        body: (a.body as { results: Array<{ seq: number }> }).results.map(
          ({ seq, ...r }) => (expect(Number.isSafeInteger(seq)).toBe(true), r),
        ),
      }))
      expect(program).toStrictEqual(page)
      expect(program.status).toBe(200)
      expect(program.type).toBe('application/json')
    }
    expect((appended[0].body as { results: unknown[] }).results).toMatchObject([
      { id: 7, status: 'applied' },
      { id: 'k', status: 'applied' },
    ])

    const refusals: Array<[string, () => Promise<[Answer, Answer]>, number]> = [
      ['no credentials', () => both(s.url, () => create('x'), json), 401],
      ['a wrong token', () => both(s.url, () => create('x'), as('nope')), 401],
      [
        'not JSON by its type',
        () =>
          both(s.url, () => create('x'), {
            'content-type': 'application/xml',
            authorization: 'Bearer tok-a',
          }),
        415,
      ],
      ['malformed JSON', () => both(s.url, () => '{"mutations": [', as('tok-a')), 400],
      [
        'nested past the limit',
        () => both(s.url, () => JSON.stringify({ mutations: [[[[[[[[[1]]]]]]]]] }), as('tok-a')),
        400,
      ],
      ['not a push', () => both(s.url, () => JSON.stringify({ mutation: [] }), as('tok-a')), 400],
      [
        'an invalid change',
        () =>
          both(
            s.url,
            () =>
              JSON.stringify({ mutations: [{ id: 1, change: { type: 'entry', session_id: 's-program' } }] }),
            as('tok-a'),
          ),
        400,
      ],
      [
        'a body past the limit',
        () => both(s.url, () => JSON.stringify({ mutations: [], pad: 'x'.repeat(3000) }), as('tok-a')),
        413,
      ],
      ['an empty body', () => both(s.url, () => '', as('tok-a')), 400],
    ]
    for (const [what, run, status] of refusals) {
      const [program, page] = await run()
      expect(essence(program), what).toStrictEqual(essence(page))
      expect(program.status, what).toBe(status)
    }
    // Another principal's session answers as an unknown one, to a program and to a page.
    const foreign = await both(s.url, () => append('s-program', 'e2'), as('tok-b'))
    expect(essence(foreign[0])).toStrictEqual(essence(foreign[1]))
    expect((foreign[0].body as { results: unknown[] }).results).toMatchObject([
      { status: 'rejected', code: 'session/not_found' },
      { status: 'rejected', code: 'session/not_found' },
    ])
  })

  it("draws on the principal's request rate: past the burst, programs and pages are answered 429 with Retry-After", async () => {
    const s = await serve('--requests-per-second', '1', '--request-burst', '2', '--origin', PAGE)
    const answers: Answer[] = []
    for (let i = 0; i < 2; i++)
      answers.push(...(await both(s.url, (via) => create(`r-${via}-${i}`), as('tok-a'))))
    // Two of the four fit the burst, from a program or a page; the rest wait.
    expect(answers.map((a) => a.status)).toStrictEqual([200, 200, 429, 429])
    expect(essence(answers[2])).toStrictEqual(essence(answers[3]))
    expect(Number(answers[2].headers['retry-after'])).toBeGreaterThanOrEqual(1)
    // Another principal has its own bucket.
    expect((await send(s.url, '/sync/push', create('r-bob'), as('tok-b'))).status).toBe(200)
  })

  it('a browser push (with an Origin) still gets its CORS answer', async () => {
    const s = await serve('--origin', 'https://app.example')
    const a = await send(s.url, '/sync/push', create('o-1'), {
      ...as('tok-a'),
      origin: 'https://app.example',
    })
    expect(a.status).toBe(200)
    expect(a.headers['access-control-allow-origin']).toBe('https://app.example')
  })

  it('on one keep-alive connection, every push is identified by its own credentials', async () => {
    const s = await serve()
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    defer(async () => agent.destroy())
    const push = (body: string, headers: Record<string, string>) =>
      send(s.url, '/sync/push', body, headers, agent)
    expect((await push(create('alice-own'), as('tok-a'))).status).toBe(200)
    const applied = await push(append('alice-own', 'e1'), as('tok-a'))
    expect(applied.reused).toBe(true)
    expect((applied.body as { results: Array<{ status: string }> }).results.map((r) => r.status)).toEqual([
      'applied',
      'applied',
    ])
    // The same connection with a wrong token, then none: refused, nothing written.
    const wrong = await push(append('alice-own', 'e2'), as('nope'))
    expect([wrong.reused, wrong.status, (wrong.body as { error: { code: string } }).error.code]).toEqual([
      true,
      401,
      'auth/unauthorized',
    ])
    const none = await push(append('alice-own', 'e2'), json)
    expect([none.reused, none.status]).toEqual([true, 401])
    // Then another principal on it: alice's session is unknown to bob.
    const bob = await push(append('alice-own', 'e2'), as('tok-b'))
    expect(bob.reused).toBe(true)
    expect(
      (bob.body as { results: Array<{ status: string; code?: string }> }).results.map((r) => r.code),
    ).toEqual(['session/not_found', 'session/not_found'])
    // And alice again: her session, with only her entry.
    const again = await push(append('alice-own', 'e1'), as('tok-a'))
    expect((again.body as { results: Array<{ status: string }> }).results.map((r) => r.status)).toEqual([
      'unchanged',
      'unchanged',
    ])
  })

  /** A raw request written in pieces (`chunked`: no Content-Length), each piece after the last was sent. */
  function sendPieces(url: string, pieces: string[], headers: Record<string, string>): Promise<Answer> {
    const { hostname, port } = new URL(url)
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: hostname,
          port,
          path: '/sync/push',
          method: 'POST',
          headers: { ...headers, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              headers: res.headers,
              body: JSON.parse(Buffer.concat(chunks).toString()),
            }),
          )
        },
      )
      // The server may refuse (and close) before the last piece: what happens to the rest is not asked.
      req.on('error', reject)
      const write = (i: number): void => {
        if (i === pieces.length) return void req.end()
        req.write(pieces[i], () => setTimeout(() => write(i + 1), 5))
      }
      write(0)
    })
  }

  /** The results of pulling everything `token` may see. */
  async function pulled(
    url: string,
    token: string,
  ): Promise<Array<{ change: { type: string; session_id?: string; meta?: { session_id: string } } }>> {
    const res = await fetch(`${url}/sync/pull?since=0`, { headers: { authorization: `Bearer ${token}` } })
    expect(res.status).toBe(200)
    return (
      (await res.json()) as {
        changes: Array<{ change: { type: string; session_id?: string; meta?: { session_id: string } } }>
      }
    ).changes
  }

  it('reads a body that arrives in several pieces whole', async () => {
    const s = await serve()
    const body = create('pieces')
    const cut = [0, 10, 40, 90, body.length]
    const a = await sendPieces(
      s.url,
      cut.slice(1).map((end, i) => body.slice(cut[i], end)),
      as('tok-a'),
    )
    expect(a.status).toBe(200)
    expect((a.body as { results: unknown[] }).results).toMatchObject([{ id: 1, status: 'applied' }])
    expect((await pulled(s.url, 'tok-a')).map((c) => c.change.meta?.session_id)).toContain('pieces')
  })

  it('refuses a body that streams past the limit with 413 and Connection: close, and writes nothing', async () => {
    const s = await serve('--max-body-bytes', '2000')
    // No Content-Length to judge by: the limit is found while reading. The push itself is valid.
    const push = create('too-long')
    const pieces = [push.slice(0, -1), `, "pad": "${'x'.repeat(1500)}`, `${'y'.repeat(1500)}"}`]
    const a = await sendPieces(s.url, pieces, as('tok-a'))
    expect(a.status).toBe(413)
    expect(a.headers.connection).toBe('close')
    expect(a.body).toMatchObject({ error: { code: 'session/invalid_request' } })
    expect(await pulled(s.url, 'tok-a')).toStrictEqual([])
    // The server goes on: the same push, within the limit, lands.
    expect((await send(s.url, '/sync/push', push, as('tok-a'))).status).toBe(200)
    expect((await pulled(s.url, 'tok-a')).map((c) => c.change.meta?.session_id)).toStrictEqual(['too-long'])
  })

  it('a client that goes away mid-body leaves nothing written, and the server keeps answering', async () => {
    const s = await serve()
    const { hostname, port } = new URL(s.url)
    const body = create('gone')
    const socket = connect(Number(port), hostname)
    await new Promise<void>(
      (resolve, reject) => (socket.once('connect', resolve), socket.once('error', reject)),
    )
    socket.write(
      `POST /sync/push HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nAuthorization: Bearer tok-a\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
    )
    await new Promise((r) => setTimeout(r, 50))
    socket.destroy()
    // A later push and pull: whatever the cut request could have written would be in the log by then.
    const a = await send(s.url, '/sync/push', create('after'), as('tok-a'))
    expect(a.status).toBe(200)
    expect((await pulled(s.url, 'tok-a')).map((c) => c.change.meta?.session_id)).toStrictEqual(['after'])
  })
})
