import { createHash, randomBytes } from 'node:crypto'
import { createStore, memoryStorage } from '@colloquy/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { createSync } from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import { failure, rpc, type ServerProcess } from '../server/helpers.js'
import { useInstances } from './instances-harness.js'

// Attachment bytes kept in PostgreSQL, seen from several `colloquy-server` instances on one
// database: what one instance stores, another serves; what one deletes is gone for all.
const ALICE = 'alice-token-0123456789'
const BOB = 'bob-token-0123456789'
const pg = useInstances('--token', `alice=${ALICE}`, '--token', `bob=${BOB}`)
const start = pg.start

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
const auth = (token: string) => ({ authorization: `Bearer ${token}` })
const sql = <T extends Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
  pg.query<T>(text, params)
/** The chunks stored for a session: how many, the largest, and the distinct contents. */
const chunksOf = async (session_id: string) =>
  (
    await sql<{ chunks: number; largest: number | null; contents: number }>(
      'SELECT count(*)::int AS chunks, max(octet_length(data)) AS largest, count(DISTINCT sha256)::int AS contents FROM colloquy_attachment_chunks WHERE session_id = $1',
      [session_id],
    )
  )[0]
const upload = (
  s: ServerProcess,
  session_id: string,
  body: Uint8Array<ArrayBuffer> | string,
  token: string,
  name = 'data.bin',
) =>
  fetch(`${s.url}/attachments/${encodeURIComponent(session_id)}?name=${name}&mime=application/octet-stream`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/octet-stream', ...auth(token) },
  })
const download = (s: ServerProcess, session_id: string, attachment_id: string, token: string) =>
  fetch(`${s.url}/attachments/${encodeURIComponent(session_id)}/${encodeURIComponent(attachment_id)}`, {
    headers: auth(token),
  })
const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> => {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
/** Waits until instance `s` lists the attachment (other instances learn of a commit within the notification delay). */
const listedOn = (s: ServerProcess, session_id: string, attachment_id: string): Promise<void> =>
  until(
    async () =>
      (await rpc(s.url, 'session::list-attachments', { session_id }, ALICE)).attachments.some(
        (a: { attachment_id: string }) => a.attachment_id === attachment_id,
      ),
    `${attachment_id} on another instance`,
  )
/** A session of Alice's created on `on` and known to every other instance. */
async function aliceSession(on: ServerProcess, title: string, others: ServerProcess[]): Promise<string> {
  const { session_id } = await rpc(on.url, 'session::create', { title }, ALICE)
  for (const o of others)
    await until(
      async () => (await rpc(o.url, 'session::get', { session_id }, ALICE)) !== null,
      `${session_id} on another instance`,
    )
  return session_id
}

describe('attachment bytes across instances', () => {
  let one: ServerProcess
  let two: ServerProcess
  beforeAll(async () => {
    one = await start()
    two = await start()
  })

  it('a 20 MB attachment uploaded through instance 1 is stored once, in chunks, and downloaded byte-identical through instance 2; a sync client on instance 2 gets it', async () => {
    const session_id = await aliceSession(one, 'big', [two])
    const bytes = new Uint8Array(randomBytes(20 * 1024 * 1024))
    const first = await upload(one, session_id, bytes, ALICE)
    expect(first.status).toBe(200)
    const { attachment } = (await first.json()) as { attachment: { attachment_id: string; sha256: string } }
    expect(attachment.sha256).toBe(sha(bytes))
    // The same bytes again: a second attachment, no second copy.
    expect((await upload(one, session_id, bytes, ALICE, 'again.bin')).status).toBe(200)
    expect(await chunksOf(session_id)).toStrictEqual({ chunks: 80, largest: 256 * 1024, contents: 1 })

    await listedOn(two, session_id, attachment.attachment_id)
    const got = await download(two, session_id, attachment.attachment_id, ALICE)
    expect(got.status).toBe(200)
    expect(got.headers.get('content-length')).toBe(String(bytes.length))
    expect(got.headers.get('etag')).toBe(`"${sha(bytes)}"`)
    const back = new Uint8Array(await got.arrayBuffer())
    expect(back.length).toBe(bytes.length)
    expect(sha(back)).toBe(sha(bytes))

    // A device syncing with instance 2 pulls the metadata and reads the bytes on demand.
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const sync = createSync(store, {
      url: two.url,
      token: ALICE,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    })
    try {
      sync.start()
      await sync.flush()
      expect((await store.listAttachments({ session_id })).attachments).toHaveLength(2)
      const blob = await store.getAttachmentBlob(session_id, attachment.attachment_id)
      expect(blob!.size).toBe(bytes.length)
      expect(sha(new Uint8Array(await blob!.arrayBuffer()))).toBe(sha(bytes))
    } finally {
      sync.close()
      await store.close()
    }
  }, 120_000)

  it('a download reads chunk by chunk: deleted through the other instance mid-download, the rest never comes, and the bytes are gone for both', async () => {
    const session_id = await aliceSession(one, 'going', [two])
    const bytes = new Uint8Array(randomBytes(20 * 1024 * 1024))
    const put = await upload(one, session_id, bytes, ALICE)
    const { attachment } = (await put.json()) as { attachment: { attachment_id: string } }
    await listedOn(two, session_id, attachment.attachment_id)
    // Read the first megabyte through instance 2, then stop reading.
    const res = await download(two, session_id, attachment.attachment_id, ALICE)
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    let received = 0
    while (received < 1024 * 1024) received += (await reader.read()).value!.length
    // The session (and with it the bytes) is deleted through instance 1 meanwhile.
    expect(await rpc(one.url, 'session::delete', { session_id }, ALICE)).toStrictEqual({ deleted: true })
    expect(await chunksOf(session_id)).toStrictEqual({ chunks: 0, largest: null, contents: 0 })
    // The rest never comes: it was not in the server's memory, it went with the session. The
    // response is cut (fewer bytes than its Content-Length), not left hanging.
    const rest = async (): Promise<void> => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        received += value.length
      }
    }
    await expect(rest()).rejects.toThrow()
    expect(received).toBeLessThan(bytes.length)
    for (const s of [one, two]) {
      await until(
        async () => (await download(s, session_id, attachment.attachment_id, ALICE)).status === 404,
        'the attachment to be gone',
      )
    }
  }, 120_000)

  it('tenancy: another principal can neither read the bytes nor take them by a sha256 offer; their owner can, without sending them', async () => {
    const session_id = await aliceSession(one, 'private', [two])
    const bytes = new Uint8Array(randomBytes(300_000))
    const put = await upload(one, session_id, bytes, ALICE)
    const { attachment } = (await put.json()) as { attachment: { attachment_id: string; created_at: number } }
    expect((await download(two, session_id, attachment.attachment_id, BOB)).status).toBe(404)
    expect(
      await rpc(
        two.url,
        'session::get-attachment',
        { session_id, attachment_id: attachment.attachment_id },
        BOB,
      ),
    ).toBeNull()

    const offer = (s: ServerProcess, target: string, id: string, token: string) =>
      fetch(
        `${s.url}/sync/attachments/${target}/${id}?name=x.bin&mime=application/octet-stream&size=${bytes.length}&sha256=${sha(bytes)}&created_at=1&reuse=1`,
        { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...auth(token) } },
      )
    const { session_id: bobs } = await rpc(two.url, 'session::create', { title: 'bob' }, BOB)
    const refused = await offer(two, bobs, 'a_stolen', BOB)
    expect([refused.status, (await failure(refused)).message]).toMatchObject([
      409,
      expect.stringContaining('sync/bytes_needed'),
    ])
    expect((await offer(two, session_id, 'a_stolen', BOB)).status).toBe(404)
    expect(await chunksOf(bobs)).toStrictEqual({ chunks: 0, largest: null, contents: 0 })

    // Alice offers the same content for another of her sessions, on the other instance: the
    // bytes are copied inside the database.
    const other = await aliceSession(two, 'mine too', [])
    const reused = await offer(two, other, 'a_reused', ALICE)
    expect(reused.status).toBe(200)
    expect(await chunksOf(other)).toStrictEqual({ chunks: 2, largest: 256 * 1024, contents: 1 })
    expect(sha(new Uint8Array(await (await download(one, other, 'a_reused', ALICE)).arrayBuffer()))).toBe(
      sha(bytes),
    )
  })

  it('a commit that dies after writing the bytes leaves none behind; a restarted instance serves what was stored, and a fork keeps its bytes when its source goes', async () => {
    // The 2nd commit of this instance is the upload: killed after its bytes and version bump, before COMMIT.
    const doomed = await start('--test-crash-after-bump', '2')
    const session_id = await aliceSession(doomed, 'crash', [one])
    const bytes = new Uint8Array(randomBytes(1024 * 1024))
    await expect(upload(doomed, session_id, bytes, ALICE)).rejects.toThrow()
    await doomed.exited
    expect(await chunksOf(session_id)).toStrictEqual({ chunks: 0, largest: null, contents: 0 })
    expect(
      (await rpc(one.url, 'session::list-attachments', { session_id }, ALICE)).attachments,
    ).toStrictEqual([])

    const put = await upload(one, session_id, bytes, ALICE)
    const { attachment, block } = (await put.json()) as {
      attachment: { attachment_id: string }
      block: unknown
    }
    await rpc(
      one.url,
      'session::append',
      { session_id, message: { role: 'user', content: [block], timestamp: 0 } },
      ALICE,
    )
    await one.stop('SIGKILL')
    one = await start()
    const again = await download(one, session_id, attachment.attachment_id, ALICE)
    expect(sha(new Uint8Array(await again.arrayBuffer()))).toBe(sha(bytes))

    const [message] = (await rpc(one.url, 'session::messages', { session_id }, ALICE)).messages
    const fork = await rpc(one.url, 'session::fork', { session_id, entry_id: message.entry_id }, ALICE)
    expect(await chunksOf(fork.session_id)).toStrictEqual({ chunks: 4, largest: 256 * 1024, contents: 1 })
    await rpc(two.url, 'session::delete', { session_id }, ALICE)
    expect(await chunksOf(session_id)).toStrictEqual({ chunks: 0, largest: null, contents: 0 })
    await listedOn(two, fork.session_id, attachment.attachment_id)
    expect(
      sha(
        new Uint8Array(
          await (await download(two, fork.session_id, attachment.attachment_id, ALICE)).arrayBuffer(),
        ),
      ),
    ).toBe(sha(bytes))
  }, 60_000)
})
