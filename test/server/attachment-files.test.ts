import { createHash } from 'node:crypto'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createStore, type Store } from '@colloquy/core'
import { fileStorage } from '../../packages/server/src/storage/file/file-storage.js'
import { attachmentFolderName } from '../../packages/server/src/storage/file/attachment-files.js'
import { cleanupAfterEach } from './helpers.js'

// The file storage's attachment layout (attachment-files.ts), in process.
const { defer, dataDir } = cleanupAfterEach('attachment-files')
const b64 = (s: string): string => Buffer.from(s).toString('base64')
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
async function open(dir: string): Promise<Store> {
  const counters = { session: 0, entry: 0, attachment: 0 }
  const store = await createStore({
    storage: fileStorage({ dir, fsync: false, warn: () => {} }),
    now: () => 1_000_000,
    newId: (k) =>
      `${k[0]}_${String(++counters[k]).padStart(3, '0')}_${Math.random().toString(36).slice(2, 6)}`,
    multiTab: false,
  })
  defer(() => store.close())
  return store
}

const folderOf = (dir: string, id: string): string => join(dir, 'attachments', attachmentFolderName(id))

describe('file storage keeps attachments as files', () => {
  it('bytes are content-addressed per session, survive a restart, and go with their session', async () => {
    const dir = await dataDir()
    let store = await open(dir)
    const { session_id } = await store.create({ title: 'files' })
    const one = await store.putAttachment({
      session_id,
      name: 'a.txt',
      mime: 'text/plain',
      data: b64('same bytes'),
    })
    const two = await store.putAttachment({
      session_id,
      name: 'b.txt',
      mime: 'text/plain',
      data: b64('same bytes'),
    })
    const three = await store.putAttachment({
      session_id,
      name: 'c.txt',
      mime: 'text/plain',
      data: b64('other'),
    })
    const folder = folderOf(dir, session_id)
    // Two attachments with the same content share one byte file.
    expect((await readdir(folder)).filter((n) => n.endsWith('.bin')).sort()).toStrictEqual(
      [`${sha(Buffer.from('other'))}.bin`, `${sha(Buffer.from('same bytes'))}.bin`].sort(),
    )
    expect((await readdir(folder)).filter((n) => n.endsWith('.json'))).toHaveLength(3)
    await store.close()

    store = await open(dir)
    expect(
      (await store.listAttachments({ session_id })).attachments.map((a) => a.attachment_id),
    ).toStrictEqual([one, two, three].map((r) => r.attachment.attachment_id).sort())
    expect(
      (await store.getAttachment({ session_id, attachment_id: two.attachment.attachment_id }))?.data,
    ).toBe(b64('same bytes'))
    // Deleting one of the two sharers keeps the bytes; deleting the second removes them.
    await store.deleteAttachment({ session_id, attachment_id: one.attachment.attachment_id })
    expect(await readdir(folder)).toContain(`${sha(Buffer.from('same bytes'))}.bin`)
    await store.deleteAttachment({ session_id, attachment_id: two.attachment.attachment_id })
    expect(await readdir(folder)).not.toContain(`${sha(Buffer.from('same bytes'))}.bin`)
    expect(
      (await store.getAttachment({ session_id, attachment_id: three.attachment.attachment_id }))?.data,
    ).toBe(b64('other'))

    // A fork gets its own folder with the referenced bytes; deleting the source leaves it whole.
    await store.append({ session_id, message: { role: 'user', content: [three.block], timestamp: 0 } })
    const leaf = (await store.messages({ session_id })).messages[0].entry_id
    const fork = await store.fork({ session_id, entry_id: leaf })
    expect(await store.delete({ session_id })).toStrictEqual({ deleted: true })
    await expect(stat(folder)).rejects.toMatchObject({ code: 'ENOENT' })
    await store.close()
    store = await open(dir)
    expect(
      (
        await store.getAttachment({
          session_id: fork.session_id,
          attachment_id: three.attachment.attachment_id,
        })
      )?.data,
    ).toBe(b64('other'))
    expect(
      await store.getAttachment({ session_id, attachment_id: three.attachment.attachment_id }),
    ).toBeNull()
  })

  it('hostile session ids stay inside the attachments folder', async () => {
    const dir = await dataDir()
    const store = await open(dir)
    for (const session_id of ['..', '../escape', '.', 'a/b\\c']) {
      await store.ensure({ session_id })
      await store.putAttachment({ session_id, name: 'x', data: b64(session_id) })
    }
    const names = await readdir(join(dir, 'attachments'))
    // Bounded hashed names: `.`, `..` and separators never reach a path.
    expect(names.sort()).toStrictEqual(['..', '../escape', '.', 'a/b\\c'].map(attachmentFolderName).sort())
    expect(names.every((n) => /^[a-z0-9-]{0,32}\+[0-9a-f]{64}\.d$/.test(n))).toBe(true)
    expect((await readdir(dir)).filter((n) => !n.endsWith('.jsonl') && n !== '.colloquy')).toStrictEqual([
      'attachments',
    ])
    for (const session_id of ['..', '../escape', '.', 'a/b\\c']) {
      const [a] = (await store.listAttachments({ session_id })).attachments
      expect((await store.getAttachment({ session_id, attachment_id: a.attachment_id }))?.data).toBe(
        b64(session_id),
      )
    }
  })
})
