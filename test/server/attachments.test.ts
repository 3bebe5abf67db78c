import { createHash, randomBytes } from 'node:crypto'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createStore, type Store } from '@colloquy/core'
import { fileStorage } from '../../packages/server/src/storage/file/file-storage.js'
import { encodeId } from '../../packages/server/src/storage/file/file-names.js'
import { cleanupAfterEach, failure, rpc, startServer } from './helpers.js'

const { defer, dataDir } = cleanupAfterEach('attachments')
const b64 = (s: string): string => Buffer.from(s).toString('base64')
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

async function open(dir: string): Promise<Store> {
  const counters = { session: 0, entry: 0, attachment: 0 }
  const store = await createStore({
    storage: fileStorage({ dir, fsync: false, warn: () => {} }),
    now: () => 1_000_000,
    newId: (k) => `${k[0]}_${String(++counters[k]).padStart(3, '0')}_${Math.random().toString(36).slice(2, 6)}`,
    multiTab: false,
  })
  defer(() => store.close())
  return store
}

const folderOf = (dir: string, id: string): string => join(dir, 'attachments', `${encodeId(id)}.d`)

describe('file storage keeps attachments as files', () => {
  it('bytes are content-addressed per session, survive a restart, and go with their session', async () => {
    const dir = await dataDir()
    let store = await open(dir)
    const { session_id } = await store.create({ title: 'files' })
    const one = await store.putAttachment({ session_id, name: 'a.txt', mime: 'text/plain', data: b64('same bytes') })
    const two = await store.putAttachment({ session_id, name: 'b.txt', mime: 'text/plain', data: b64('same bytes') })
    const three = await store.putAttachment({ session_id, name: 'c.txt', mime: 'text/plain', data: b64('other') })
    const folder = folderOf(dir, session_id)
    // Two attachments with the same content share one byte file.
    expect((await readdir(folder)).filter((n) => n.endsWith('.bin')).sort()).toStrictEqual([`${sha(Buffer.from('other'))}.bin`, `${sha(Buffer.from('same bytes'))}.bin`].sort())
    expect((await readdir(folder)).filter((n) => n.endsWith('.json'))).toHaveLength(3)
    await store.close()

    store = await open(dir)
    expect((await store.listAttachments({ session_id })).attachments.map((a) => a.attachment_id)).toStrictEqual(
      [one, two, three].map((r) => r.attachment.attachment_id).sort(),
    )
    expect((await store.getAttachment({ session_id, attachment_id: two.attachment.attachment_id }))?.data).toBe(b64('same bytes'))
    // Deleting one of the two sharers keeps the bytes; deleting the second removes them.
    await store.deleteAttachment({ session_id, attachment_id: one.attachment.attachment_id })
    expect(await readdir(folder)).toContain(`${sha(Buffer.from('same bytes'))}.bin`)
    await store.deleteAttachment({ session_id, attachment_id: two.attachment.attachment_id })
    expect(await readdir(folder)).not.toContain(`${sha(Buffer.from('same bytes'))}.bin`)
    expect((await store.getAttachment({ session_id, attachment_id: three.attachment.attachment_id }))?.data).toBe(b64('other'))

    // A fork gets its own folder with the referenced bytes; deleting the source leaves it whole.
    await store.append({ session_id, message: { role: 'user', content: [three.block], timestamp: 0 } })
    const leaf = (await store.messages({ session_id })).messages[0].entry_id
    const fork = await store.fork({ session_id, entry_id: leaf })
    expect(await store.delete({ session_id })).toStrictEqual({ deleted: true })
    await expect(stat(folder)).rejects.toMatchObject({ code: 'ENOENT' })
    await store.close()
    store = await open(dir)
    expect((await store.getAttachment({ session_id: fork.session_id, attachment_id: three.attachment.attachment_id }))?.data).toBe(b64('other'))
    expect(await store.getAttachment({ session_id, attachment_id: three.attachment.attachment_id })).toBeNull()
  })

  it('hostile session ids stay inside the attachments folder', async () => {
    const dir = await dataDir()
    const store = await open(dir)
    for (const session_id of ['..', '../escape', '.', 'a/b\\c']) {
      await store.ensure({ session_id })
      await store.putAttachment({ session_id, name: 'x', data: b64(session_id) })
    }
    const names = await readdir(join(dir, 'attachments'))
    // `.` and `..` pass the encoding unchanged: the suffix keeps them plain folder names.
    expect(names.sort()).toStrictEqual(['...d', '..d', '..%2Fescape.d', 'a%2Fb%5Cc.d'].sort())
    expect((await readdir(dir)).filter((n) => !n.endsWith('.jsonl') && n !== '.colloquy')).toStrictEqual(['attachments'])
    for (const session_id of ['..', '../escape', '.', 'a/b\\c']) {
      const [a] = (await store.listAttachments({ session_id })).attachments
      expect((await store.getAttachment({ session_id, attachment_id: a.attachment_id }))?.data).toBe(b64(session_id))
    }
  })
})

/** fetch, with a failure that says which request it was (the socket error alone does not). */
const fetchOrSay = (what: string, input: string, init?: RequestInit): Promise<Response> =>
  fetch(input, init).catch((e: unknown) => {
    throw new Error(`${what} ${input} failed: ${String(e)}`)
  })

describe('streamed attachment endpoints', () => {
  const ALICE = 'alice-token-0123456789'
  const BOB = 'bob-token-0123456789'
  const up = (url: string, session_id: string, body: BodyInit, name: string, token?: string, mime = 'application/octet-stream') =>
    fetch(`${url}/attachments/${encodeURIComponent(session_id)}?name=${encodeURIComponent(name)}&mime=${encodeURIComponent(mime)}`, {
      method: 'POST',
      body,
      headers: { 'content-type': mime, ...(token && { authorization: `Bearer ${token}` }) },
      duplex: 'half',
    } as RequestInit).catch((e: unknown) => {
      throw new Error(`upload ${name} failed: ${String(e)}`)
    })
  const down = (url: string, session_id: string, attachment_id: string, token?: string) =>
    fetchOrSay('download', `${url}/attachments/${encodeURIComponent(session_id)}/${encodeURIComponent(attachment_id)}`, { headers: token ? { authorization: `Bearer ${token}` } : {} })

  it('a 20 MB attachment round-trips through the streamed endpoints and is stored as a file', async () => {
    const dir = await dataDir()
    const server = await startServer(['--data-dir', dir, '--no-fsync', '--max-body-bytes', '65536'])
    defer(() => server.stop())
    const { session_id } = await rpc(server.url, 'session::create', { title: 'big' })
    const bytes = randomBytes(20 * 1024 * 1024)
    const res = await up(server.url, session_id, bytes, 'big.bin')
    expect(res.status).toBe(200)
    const { attachment, block } = (await res.json()) as { attachment: { attachment_id: string; size: number; sha256: string; mime: string }; block: unknown }
    expect(attachment).toMatchObject({ size: bytes.length, sha256: sha(bytes), mime: 'application/octet-stream' })
    expect(block).toMatchObject({ type: 'file', size: bytes.length, name: 'big.bin' })
    const got = await down(server.url, session_id, attachment.attachment_id)
    expect(got.status).toBe(200)
    expect(got.headers.get('content-type')).toBe('application/octet-stream')
    expect(got.headers.get('x-content-type-options')).toBe('nosniff')
    const back = Buffer.from(await got.arrayBuffer())
    expect(back.length).toBe(bytes.length)
    expect(sha(back)).toBe(sha(bytes))
    expect((await stat(join(folderOf(dir, session_id), `${sha(bytes)}.bin`))).size).toBe(bytes.length)
    // The JSON form is bounded by the body limit; its metadata read carries no bytes.
    expect((await rpc(server.url, 'session::get-attachment', { session_id, attachment_id: attachment.attachment_id, include_data: false })).data).toBeNull()
  })

  it('uploads are bounded, authenticated and scoped to the caller\'s sessions', async () => {
    const server = await startServer(['--memory', '--token', `alice=${ALICE}`, '--token', `bob=${BOB}`, '--max-attachment-bytes', '1000'])
    defer(() => server.stop())
    const { session_id } = await rpc(server.url, 'session::create', {}, ALICE)
    expect((await up(server.url, session_id, 'hi', 'x.txt')).status).toBe(401)
    expect((await down(server.url, session_id, 'a_x')).status).toBe(401)
    // Bob cannot write to, list or read Alice's session: it answers like an unknown one.
    const foreign = await up(server.url, session_id, 'hi', 'x.txt', BOB)
    expect([foreign.status, (await failure(foreign)).message]).toMatchObject([404, expect.stringContaining('session/not_found')])
    const ok = await up(server.url, session_id, 'hello', 'x.txt', ALICE, 'text/plain')
    expect(ok.status).toBe(200)
    const { attachment } = (await ok.json()) as { attachment: { attachment_id: string } }
    expect((await down(server.url, session_id, attachment.attachment_id, BOB)).status).toBe(404)
    expect(await (await down(server.url, session_id, attachment.attachment_id, ALICE)).text()).toBe('hello')
    expect(await rpc(server.url, 'session::get-attachment', { session_id, attachment_id: attachment.attachment_id }, BOB)).toBeNull()
    await expect(rpc(server.url, 'session::list-attachments', { session_id }, BOB)).rejects.toMatchObject({ code: 'session/not_found' })
    // Past the limit: 413 with the contract's code, declared or streamed.
    const big = await up(server.url, session_id, Buffer.alloc(1001), 'big.bin', ALICE)
    expect([big.status, (await failure(big)).message]).toMatchObject([413, expect.stringContaining('session/attachment_too_large')])
    const streamed = new ReadableStream({
      start(c) {
        for (let i = 0; i < 11; i++) c.enqueue(new Uint8Array(100))
        c.close()
      },
    })
    // A body with no declared length is cut off as it passes the limit: the client sees the 413,
    // or the connection closing under its still-sending request.
    const chunked = await up(server.url, session_id, streamed, 'chunked.bin', ALICE).then((r) => r.status, () => 'closed')
    expect([413, 'closed']).toContain(chunked)
    await expect(rpc(server.url, 'session::put-attachment', { session_id, name: 'b', data: Buffer.alloc(1001).toString('base64') }, ALICE)).rejects.toMatchObject({ code: 'session/attachment_too_large' })
    expect((await rpc(server.url, 'session::list-attachments', { session_id }, ALICE)).attachments).toHaveLength(1)
    // A blank name is refused before anything is read.
    expect((await up(server.url, session_id, 'x', '  ', ALICE)).status).toBe(400)
    // Mention search only offers the caller's sessions.
    await rpc(server.url, 'session::create', { title: 'bob private' }, BOB)
    expect((await rpc(server.url, 'session::mention::search', { query: '' }, ALICE)).items.map((i: { id: string }) => i.id)).toStrictEqual([session_id])
    expect(await rpc(server.url, 'session::mention::get', { id: session_id }, BOB)).toBeNull()
    expect((await rpc(server.url, 'session::mention::get', { id: session_id }, ALICE)).id).toBe(session_id)
  })
})
