import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { cleanupAfterEach, currentDataBackend, failure, rpc, startServer, storageArgs } from './helpers.js'

// The streamed attachment endpoints of a `colloquy-server` process, on its file storage here
// and on PostgreSQL through test/postgres/attachments.test.ts.
const { defer } = cleanupAfterEach('attachments')
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

/** fetch, with a failure that says which request it was (the socket error alone does not). */
const fetchOrSay = (what: string, input: string, init?: RequestInit): Promise<Response> =>
  fetch(input, init).catch((e: unknown) => {
    throw new Error(`${what} ${input} failed: ${String(e)}`)
  })

describe('streamed attachment endpoints', () => {
  const ALICE = 'alice-token-0123456789'
  const BOB = 'bob-token-0123456789'
  const up = (
    url: string,
    session_id: string,
    body: BodyInit,
    name: string,
    token?: string,
    mime = 'application/octet-stream',
  ) =>
    fetch(
      `${url}/attachments/${encodeURIComponent(session_id)}?name=${encodeURIComponent(name)}&mime=${encodeURIComponent(mime)}`,
      {
        method: 'POST',
        body,
        // The type travels in the query: bytes go as application/octet-stream, a Content-Type no
        // page of another site can send without a preflight (text/plain could be).
        headers: {
          'content-type': 'application/octet-stream',
          ...(token && { authorization: `Bearer ${token}` }),
        },
        duplex: 'half',
      } as RequestInit,
    ).catch((e: unknown) => {
      throw new Error(`upload ${name} failed: ${String(e)}`)
    })
  const down = (url: string, session_id: string, attachment_id: string, token?: string) =>
    fetchOrSay(
      'download',
      `${url}/attachments/${encodeURIComponent(session_id)}/${encodeURIComponent(attachment_id)}`,
      { headers: token ? { authorization: `Bearer ${token}` } : {} },
    )

  it(`a 20 MB attachment round-trips through the streamed endpoints and is stored once in ${currentDataBackend().name}`, async () => {
    const data = await currentDataBackend().data()
    defer(() => data.remove())
    const server = await startServer([...data.args, '--no-fsync', '--max-body-bytes', '65536'])
    defer(() => server.stop())
    const { session_id } = await rpc(server.url, 'session::create', { title: 'big' })
    const bytes = randomBytes(20 * 1024 * 1024)
    const res = await up(server.url, session_id, bytes, 'big.bin')
    expect(res.status).toBe(200)
    const { attachment, block } = (await res.json()) as {
      attachment: { attachment_id: string; size: number; sha256: string; mime: string }
      block: unknown
    }
    expect(attachment).toMatchObject({
      size: bytes.length,
      sha256: sha(bytes),
      mime: 'application/octet-stream',
    })
    expect(block).toMatchObject({ type: 'file', size: bytes.length, name: 'big.bin' })
    const got = await down(server.url, session_id, attachment.attachment_id)
    expect(got.status).toBe(200)
    expect(got.headers.get('content-type')).toBe('application/octet-stream')
    expect(got.headers.get('x-content-type-options')).toBe('nosniff')
    const back = Buffer.from(await got.arrayBuffer())
    expect(back.length).toBe(bytes.length)
    expect(sha(back)).toBe(sha(bytes))
    // The same bytes again under a second attachment: stored once for the session.
    expect((await up(server.url, session_id, bytes, 'again.bin')).status).toBe(200)
    expect(await data.contents(session_id)).toStrictEqual([{ sha256: sha(bytes), bytes: bytes.length }])
    // The JSON form is bounded by the body limit; its metadata read carries no bytes.
    expect(
      (
        await rpc(server.url, 'session::get-attachment', {
          session_id,
          attachment_id: attachment.attachment_id,
          include_data: false,
        })
      ).data,
    ).toBeNull()
  })

  it("uploads are bounded, authenticated and scoped to the caller's sessions", async () => {
    const server = await startServer([
      ...(await storageArgs()),
      '--token',
      `alice=${ALICE}`,
      '--token',
      `bob=${BOB}`,
      '--max-attachment-bytes',
      '1000',
    ])
    defer(() => server.stop())
    const { session_id } = await rpc(server.url, 'session::create', {}, ALICE)
    expect((await up(server.url, session_id, 'hi', 'x.txt')).status).toBe(401)
    expect((await down(server.url, session_id, 'a_x')).status).toBe(401)
    // Bob cannot write to, list or read Alice's session: it answers like an unknown one.
    const foreign = await up(server.url, session_id, 'hi', 'x.txt', BOB)
    expect([foreign.status, (await failure(foreign)).message]).toMatchObject([
      404,
      expect.stringContaining('session/not_found'),
    ])
    const ok = await up(server.url, session_id, 'hello', 'x.txt', ALICE, 'text/plain')
    expect(ok.status).toBe(200)
    const { attachment } = (await ok.json()) as { attachment: { attachment_id: string } }
    expect((await down(server.url, session_id, attachment.attachment_id, BOB)).status).toBe(404)
    expect(await (await down(server.url, session_id, attachment.attachment_id, ALICE)).text()).toBe('hello')
    expect(
      await rpc(
        server.url,
        'session::get-attachment',
        { session_id, attachment_id: attachment.attachment_id },
        BOB,
      ),
    ).toBeNull()
    await expect(rpc(server.url, 'session::list-attachments', { session_id }, BOB)).rejects.toMatchObject({
      code: 'session/not_found',
    })
    // Past the limit: 413 with the contract's code, declared or streamed.
    const big = await up(server.url, session_id, Buffer.alloc(1001), 'big.bin', ALICE)
    expect([big.status, (await failure(big)).message]).toMatchObject([
      413,
      expect.stringContaining('session/attachment_too_large'),
    ])
    const streamed = new ReadableStream({
      start(c) {
        for (let i = 0; i < 11; i++) c.enqueue(new Uint8Array(100))
        c.close()
      },
    })
    // A body with no declared length is cut off as it passes the limit: the client sees the 413,
    // or the connection closing under its still-sending request.
    const chunked = await up(server.url, session_id, streamed, 'chunked.bin', ALICE).then(
      (r) => r.status,
      () => 'closed',
    )
    expect([413, 'closed']).toContain(chunked)
    await expect(
      rpc(
        server.url,
        'session::put-attachment',
        { session_id, name: 'b', data: Buffer.alloc(1001).toString('base64') },
        ALICE,
      ),
    ).rejects.toMatchObject({ code: 'session/attachment_too_large' })
    expect(
      (await rpc(server.url, 'session::list-attachments', { session_id }, ALICE)).attachments,
    ).toHaveLength(1)
    // A blank name is refused before anything is read.
    expect((await up(server.url, session_id, 'x', '  ', ALICE)).status).toBe(400)
    // Mention search only offers the caller's sessions.
    await rpc(server.url, 'session::create', { title: 'bob private' }, BOB)
    expect(
      (await rpc(server.url, 'session::mention::search', { query: '' }, ALICE)).items.map(
        (i: { id: string }) => i.id,
      ),
    ).toStrictEqual([session_id])
    expect(await rpc(server.url, 'session::mention::get', { id: session_id }, BOB)).toBeNull()
    expect((await rpc(server.url, 'session::mention::get', { id: session_id }, ALICE)).id).toBe(session_id)
  })
})
