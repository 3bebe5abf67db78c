import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage } from '../src/index.js'

const open = (limits?: { max_attachment_bytes?: number }) =>
  createStore({ storage: memoryStorage(), multiTab: false, ...(limits && { limits }) })

describe('attachments in process', () => {
  it('a Blob or File is accepted without base64; a bare Blob is named after its type', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    const pasted = await store.putAttachment({
      session_id,
      file: new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }),
    })
    expect(pasted.attachment).toMatchObject({ name: 'image.png', mime: 'image/png', size: 3 })
    expect(pasted.attachment.attachment_id).toMatch(/^a_/)
    expect(pasted.attachment.sha256).toBe('039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81')
    const file = await store.putAttachment({
      session_id,
      file: new File(['%PDF'], 'report.pdf', { type: 'application/pdf' }),
    })
    expect(file.attachment).toMatchObject({ name: 'report.pdf', mime: 'application/pdf', size: 4 })
    expect(file.block).toStrictEqual({
      type: 'file',
      attachment_id: file.attachment.attachment_id,
      name: 'report.pdf',
      mime: 'application/pdf',
      size: 4,
    })
    const blob = await store.getAttachmentBlob(session_id, file.attachment.attachment_id)
    expect(blob!.type).toBe('application/pdf')
    expect(await blob!.text()).toBe('%PDF')
    // The wire form reads back as base64.
    expect(
      (await store.getAttachment({ session_id, attachment_id: pasted.attachment.attachment_id }))!.data,
    ).toBe('AQID')
    // A name given explicitly must not be blank; data and file together are ambiguous.
    await expect(
      store.putAttachment({ session_id, name: '  ', file: new Blob(['x']) }),
    ).rejects.toMatchObject({ code: 'session/invalid_request' })
    await expect(
      store.putAttachment({ session_id, name: 'x', data: 'eA==', file: new Blob(['x']) }),
    ).rejects.toMatchObject({ code: 'session/invalid_request' })
    await expect(store.putAttachment({ session_id, name: 'x' })).rejects.toMatchObject({
      code: 'session/invalid_request',
    })
    await expect(
      store.call('session::put-attachment', { session_id, name: 'x', file: 'not a blob' }),
    ).rejects.toMatchObject({ code: 'session/invalid_request' })
  })

  it('the default limit is 50 MiB, checked before the bytes are read or the session looked up', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    const over = new Blob([new Uint8Array(52_428_801)])
    await expect(store.putAttachment({ session_id, name: 'big.bin', file: over })).rejects.toMatchObject({
      code: 'session/attachment_too_large',
    })
    await expect(
      store.putAttachment({ session_id: 's_404', name: 'big.bin', file: over }),
    ).rejects.toMatchObject({ code: 'session/attachment_too_large' })
    expect(
      (await store.putAttachment({ session_id, name: 'ok.bin', file: new Blob([new Uint8Array(1024)]) }))
        .attachment.size,
    ).toBe(1024)
    expect((await store.listAttachments({ session_id })).attachments).toHaveLength(1)
  })

  it('strict base64: no whitespace, no URL alphabet, padding required, canonical last symbol', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    for (const data of ['aGVsbG8', 'aGVs bG8=', 'aGVsbG8-', 'aGVsbG9=', '====', 'a===']) {
      await expect(store.putAttachment({ session_id, name: 'x', data }), data).rejects.toMatchObject({
        code: 'session/invalid_request',
      })
    }
    expect((await store.putAttachment({ session_id, name: 'empty', data: '' })).attachment.size).toBe(0)
    expect((await store.putAttachment({ session_id, name: 'h', data: 'aGVsbG8=' })).attachment.size).toBe(5)
  })

  it('draft$ and attachments$ follow set-draft, puts and deletes, emitting only on change', async () => {
    const store = await open()
    const { session_id } = await store.create({})
    const drafts: unknown[] = []
    const lists: unknown[] = []
    store.draft$(session_id).subscribe((d) => drafts.push(d))
    store.attachments$(session_id).subscribe((l) => lists.push(l?.map((a) => a.name)))
    const { attachment } = await store.putAttachment({ session_id, name: 'a.txt', data: 'YQ==' })
    await store.setDraft({ session_id, draft: 'hi', attachment_ids: [attachment.attachment_id] })
    await store.setDraft({ session_id, draft: 'hi', attachment_ids: [attachment.attachment_id] })
    await store.setStatus({ session_id, status: 'working' })
    await store.deleteAttachment({ session_id, attachment_id: attachment.attachment_id })
    await store.delete({ session_id })
    expect(drafts).toStrictEqual([
      { draft: null, attachments: [] },
      { draft: 'hi', attachments: [attachment] },
      { draft: 'hi', attachments: [] },
      null,
    ])
    expect(lists).toStrictEqual([[], ['a.txt'], [], undefined])
  })
})

describe('the byte read beside the metadata lookup', () => {
  /** A memory storage whose byte reads answer `read` for every id, listed or not. */
  const storageReading = (read: (...args: unknown[]) => Promise<Blob | undefined>) => {
    const inner = memoryStorage()
    return { ...inner, attachmentBytes: read }
  }

  it('answers no bytes and no read failure for an attachment the session does not list', async () => {
    for (const read of [
      async () => new Blob(['left on disk']),
      async () => {
        throw new Error('the disk failed')
      },
    ]) {
      const store = await createStore({ storage: storageReading(read), multiTab: false })
      const { session_id } = await store.create({})
      const { attachment } = await store.putAttachment({ session_id, file: new Blob(['x']) })
      await store.deleteAttachment({ session_id, attachment_id: attachment.attachment_id })
      expect(await store.getAttachmentBlob(session_id, attachment.attachment_id)).toBeNull()
      expect(await store.getAttachment({ session_id, attachment_id: attachment.attachment_id })).toBeNull()
      await store.close()
    }
  })

  it('refuses ids the validator refuses in every byte read (Blob, URL, base64), and gives the storage no read of them', async () => {
    const asked: unknown[] = []
    const store = await createStore({
      storage: storageReading(async (...args) => void asked.push(args)),
      multiTab: false,
    })
    const { session_id } = await store.create({})
    for (const [sid, aid] of [
      ['s'.repeat(100_000), 'a'],
      [session_id, 'a'.repeat(100_000)],
      [session_id, '\ud800'],
    ] as const) {
      await expect(store.getAttachmentBlob(sid, aid)).rejects.toMatchObject({
        code: 'session/invalid_request',
      })
      await expect(store.attachmentUrl(sid, aid)).rejects.toMatchObject({ code: 'session/invalid_request' })
      await expect(store.getAttachment({ session_id: sid, attachment_id: aid })).rejects.toMatchObject({
        code: 'session/invalid_request',
      })
    }
    expect(asked).toEqual([])
    await store.close()
  })

  it('reports a failed read of a listed attachment as a storage failure', async () => {
    const store = await createStore({
      storage: storageReading(async () => {
        throw new Error('the disk failed')
      }),
      multiTab: false,
    })
    const { session_id } = await store.create({})
    const { attachment } = await store.putAttachment({ session_id, file: new Blob(['x']) })
    await expect(store.getAttachmentBlob(session_id, attachment.attachment_id)).rejects.toMatchObject({
      code: 'session/storage',
    })
    await store.close()
  })
})
