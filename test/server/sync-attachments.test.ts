import { createHash, randomBytes } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Store } from '@colloquy/core'
import { createSync, type Sync } from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import { encodeId } from '../../packages/server/src/file-names.js'
import { cleanupAfterEach, startServer } from './helpers.js'

// Attachments through the sync client and a real server process (file storage): streamed
// uploads at their place in the outbox, the same bytes sent once, bytes fetched on first read.
const { defer, dataDir } = cleanupAfterEach('sync-attachments')
const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

async function device(url: string, sent: { bytes: number }): Promise<{ store: Store; sync: Sync }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  // Counts the attachment bytes this device sends.
  const counting: typeof fetch = (input, init) => {
    if (String(input).includes('/sync/attachments/') && init?.body instanceof Blob) sent.bytes += init.body.size
    return fetch(input, init)
  }
  const sync = createSync(store, { url, token: 'tok-a', fetch: counting, WebSocket: WebSocket as unknown as typeof globalThis.WebSocket })
  cleanup.push(() => store.close(), () => sync.close())
  sync.start()
  return { store, sync }
}

describe('sync of attachments with a real server', () => {
  it('a 20 MB attachment round-trips; the same bytes under a second id are not sent again; B reads them on demand', async () => {
    const dir = await dataDir()
    const server = await startServer(['--data-dir', dir, '--no-fsync', '--token', 'alice=tok-a'])
    defer(() => server.stop())
    const sentByA = { bytes: 0 }
    const a = await device(server.url, sentByA)
    const b = await device(server.url, { bytes: 0 })
    const bytes = new Uint8Array(randomBytes(20 * 1024 * 1024))
    const { session_id } = await a.store.create({ title: 'big file' })
    const one = await a.store.putAttachment({ session_id, file: new File([bytes], 'data.bin', { type: 'application/octet-stream' }) })
    const two = await a.store.putAttachment({ session_id, file: new File([bytes], 'copy.bin', { type: 'application/octet-stream' }) })
    await a.store.append({ session_id, message: { role: 'user', content: [one.block, two.block], timestamp: 0 } })
    await a.sync.flush()
    expect(sentByA.bytes).toBe(bytes.length)
    // On the server: one byte file for both attachments, in the session's folder.
    const names = await readdir(join(dir, 'attachments', `${encodeId(session_id)}.d`))
    expect(names.filter((n) => n.endsWith('.bin'))).toEqual([`${sha(bytes)}.bin`])
    expect(names.filter((n) => n.endsWith('.json'))).toHaveLength(2)

    await b.sync.flush()
    expect((await b.store.listAttachments({ session_id })).attachments.map((x) => x.attachment_id).sort()).toEqual([one.attachment.attachment_id, two.attachment.attachment_id].sort())
    const got = await b.store.getAttachmentBlob(session_id, two.attachment.attachment_id)
    expect(got!.size).toBe(bytes.length)
    expect(sha(new Uint8Array(await got!.arrayBuffer()))).toBe(sha(bytes))
    expect((await b.store.messages({ session_id })).messages[0].message!.content).toEqual([one.block, two.block])

    // A fork copies the attachments under the same ids: its upload reuses the source's bytes.
    const [first] = (await a.store.messages({ session_id })).messages
    const fork = await a.store.fork({ session_id, entry_id: first.entry_id })
    await a.sync.flush()
    expect(sentByA.bytes).toBe(bytes.length)
    await b.sync.flush()
    const copy = await b.store.getAttachmentBlob(fork.session_id, one.attachment.attachment_id)
    expect(sha(new Uint8Array(await copy!.arrayBuffer()))).toBe(sha(bytes))
  }, 120_000)
})
