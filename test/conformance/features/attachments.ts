import { beforeEach, describe, expect, it } from 'vitest'
import { rejects, T0, text, type Harness } from '../harness.js'

const HELLO = 'aGVsbG8=' // "hello"
const HELLO_SHA = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824'
const PNG = 'iVBORw0KGgo=' // the PNG signature: 8 bytes

const helloMeta = (over: Record<string, unknown> = {}) => ({
  attachment_id: 'a_001',
  session_id: 's_001',
  name: 'hello.txt',
  mime: 'text/plain',
  size: 5,
  sha256: HELLO_SHA,
  created_at: T0,
  ...over,
})

// attachments.feature (contract 2.16, 7 item 2), bare session s_001; and D9, D13.
export function attachmentsFeature(h: Harness): void {
  describe('attachments', () => {
    let s: string
    const put = (name: string, data: string, mime = 'text/plain', session_id = s) =>
      h.call('session::put-attachment', { session_id, name, mime, data })
    const list = async (session_id = s) =>
      (await h.call('session::list-attachments', { session_id })).attachments.map((a) => a.attachment_id)
    beforeEach(async () => {
      s = await h.bare()
    })

    it('19. an uploaded file reads back byte-for-byte with its metadata', async () => {
      expect(await put('hello.txt', HELLO)).toStrictEqual({
        attachment: helloMeta(),
        block: { type: 'file', attachment_id: 'a_001', name: 'hello.txt', mime: 'text/plain', size: 5 },
      })
      expect(
        await h.call('session::get-attachment', { session_id: s, attachment_id: 'a_001' }),
      ).toStrictEqual({ attachment: helloMeta(), data: HELLO })
      expect((await h.call('session::list-attachments', { session_id: s })).attachments).toStrictEqual([
        helloMeta(),
      ])
    })

    it('20. uploading is event-silent and leaves the session record alone', async () => {
      const f = h.sink()
      f.bind('session::message-added')
      f.bind('session::meta-updated')
      h.clock.advance(300)
      await put('hello.txt', HELLO)
      expect(await f.got()).toStrictEqual([])
      const meta = await h.meta(s)
      expect(meta.message_count).toBe(0)
      expect(meta.updated_at).toBe(T0)
    })

    it('21. a metadata-only read carries no bytes', async () => {
      await put('hello.txt', HELLO)
      expect(
        await h.call('session::get-attachment', {
          session_id: s,
          attachment_id: 'a_001',
          include_data: false,
        }),
      ).toStrictEqual({ attachment: helloMeta(), data: null })
    })

    it('22. unknown attachments read as null', async () => {
      expect(await h.call('session::get-attachment', { session_id: s, attachment_id: 'a_404' })).toBeNull()
      expect(
        await h.call('session::get-attachment', { session_id: 's_404', attachment_id: 'a_001' }),
      ).toBeNull()
      await rejects(h.call('session::list-attachments', { session_id: 's_404' }), 'session/not_found')
    })

    it('23. a message carrying a file block round-trips through the transcript', async () => {
      const { block } = await put('hello.txt', HELLO)
      const message = { role: 'user' as const, content: [text('see attached'), block], timestamp: 0 }
      await h.call('session::append', { session_id: s, message })
      expect((await h.call('session::messages', { session_id: s })).messages).toStrictEqual([
        { entry_id: 'e_001', message },
      ])
    })

    it('24. fork copies exactly the referenced attachments under the same ids', async () => {
      const { block } = await put('kept.txt', HELLO)
      await put('dropped.txt', 'Ynll')
      await h.call('session::append', {
        session_id: s,
        message: { role: 'user', content: [block], timestamp: 0 },
      })
      expect((await h.call('session::fork', { session_id: s, entry_id: 'e_001' })).session_id).toBe('s_002')
      expect(
        await h.call('session::get-attachment', { session_id: 's_002', attachment_id: 'a_001' }),
      ).toStrictEqual({
        attachment: helloMeta({ session_id: 's_002', name: 'kept.txt' }),
        data: HELLO,
      })
      expect(await list('s_002')).toStrictEqual(['a_001'])
      expect(await list()).toStrictEqual(['a_001', 'a_002'])
    })

    it('25. deleting a session removes its attachments', async () => {
      await put('hello.txt', HELLO)
      expect(await h.call('session::delete', { session_id: s })).toStrictEqual({ deleted: true })
      expect(await h.call('session::get-attachment', { session_id: s, attachment_id: 'a_001' })).toBeNull()
      await h.call('session::ensure', { session_id: s })
      expect(await list()).toStrictEqual([])
      expect(await h.call('session::get-attachment', { session_id: s, attachment_id: 'a_001' })).toBeNull()
    })

    it('26. attachments survive a worker restart (a second read through storage)', async () => {
      // The restart itself is a storage test (packages/core, packages/server); here the bytes are
      // read back twice, the second time after another write to the session.
      await put('hello.txt', HELLO)
      await h.say(s, 'later')
      expect(
        await h.call('session::get-attachment', { session_id: s, attachment_id: 'a_001' }),
      ).toStrictEqual({ attachment: helloMeta(), data: HELLO })
    })

    it('28. malformed uploads are rejected before anything is written', async () => {
      await rejects(put('bad.txt', 'not base64!'), 'session/invalid_request')
      await rejects(put('   ', HELLO), 'session/invalid_request')
      await rejects(put('hello.txt', HELLO, 'text/plain', 's_404'), 'session/not_found')
      // The contract's order: name, then base64, before the session.
      await rejects(put('   ', HELLO, 'text/plain', 's_404'), 'session/invalid_request')
      await rejects(put('x', '%%%', 'text/plain', 's_404'), 'session/invalid_request')
      expect(await list()).toStrictEqual([])
    })

    it('29. attachments parked with the draft read back on session::get', async () => {
      await put('shot.png', PNG, 'image/png')
      h.clock.advance(10)
      await put('notes.txt', HELLO)
      const res = await h.call('session::set-draft', {
        session_id: s,
        draft: 'look at these',
        attachment_ids: ['a_002', 'a_001', 'a_002'],
      })
      expect(res.draft).toBe('look at these')
      expect(res.attachments.map((a) => [a.attachment_id, a.name, a.mime])).toStrictEqual([
        ['a_002', 'notes.txt', 'text/plain'],
        ['a_001', 'shot.png', 'image/png'],
      ])
      const meta = await h.meta(s)
      expect(meta.draft).toBe('look at these')
      expect(meta.draft_attachments).toStrictEqual(res.attachments)
      expect(meta.draft_attachments![1].size).toBe(8)
      expect(meta.draft_attachments![0].size).toBe(5)
    })

    it('30. a text-only draft save keeps the parked attachments', async () => {
      await put('hello.txt', HELLO)
      await h.call('session::set-draft', { session_id: s, draft: 'one', attachment_ids: ['a_001'] })
      expect(
        (await h.call('session::set-draft', { session_id: s, draft: 'one more' })).attachments,
      ).toHaveLength(1)
      expect(
        await h.call('session::set-draft', { session_id: s, draft: null, attachment_ids: [] }),
      ).toStrictEqual({ draft: null, attachments: [] })
      const meta = await h.meta(s)
      expect('draft' in meta).toBe(false)
      expect('draft_attachments' in meta).toBe(false)
    })

    it('31. parking an unknown attachment id is rejected', async () => {
      await h.call('session::set-draft', { session_id: s, draft: 'kept' })
      await rejects(
        h.call('session::set-draft', { session_id: s, draft: 'other', attachment_ids: ['a_404'] }),
        'session/invalid_request',
      )
      expect((await h.meta(s)).draft).toBe('kept')
    })

    it('32. fork does not carry the draft or its attachments', async () => {
      await h.say(s, 'one')
      await put('hello.txt', HELLO)
      await h.call('session::set-draft', { session_id: s, draft: 'unsent', attachment_ids: ['a_001'] })
      const fork = await h.call('session::fork', { session_id: s, entry_id: 'e_001' })
      expect('draft' in fork.meta).toBe(false)
      expect('draft_attachments' in fork.meta).toBe(false)
      expect(await list(fork.session_id)).toStrictEqual([])
    })

    it('33. deleting a draft attachment frees the bytes and updates the draft', async () => {
      await put('a.txt', HELLO)
      await put('b.txt', HELLO)
      await h.call('session::set-draft', { session_id: s, draft: 'both', attachment_ids: ['a_001', 'a_002'] })
      expect(
        await h.call('session::delete-attachment', { session_id: s, attachment_id: 'a_001' }),
      ).toStrictEqual({ deleted: true })
      expect(await h.call('session::get-attachment', { session_id: s, attachment_id: 'a_001' })).toBeNull()
      const meta = await h.meta(s)
      expect(meta.draft_attachments!.map((a) => a.attachment_id)).toStrictEqual(['a_002'])
      expect(meta.draft).toBe('both')
      expect(
        await h.call('session::delete-attachment', { session_id: s, attachment_id: 'a_001' }),
      ).toStrictEqual({ deleted: false })
      await rejects(
        h.call('session::delete-attachment', { session_id: 's_404', attachment_id: 'a_001' }),
        'session/not_found',
      )
    })

    it('34. an attachment referenced by a message cannot be deleted', async () => {
      const { block } = await put('hello.txt', HELLO)
      await h.call('session::append', {
        session_id: s,
        message: { role: 'user', content: [block], timestamp: 0 },
      })
      await rejects(
        h.call('session::delete-attachment', { session_id: s, attachment_id: 'a_001' }),
        'session/attachment_in_use',
      )
      expect((await h.call('session::get-attachment', { session_id: s, attachment_id: 'a_001' }))?.data).toBe(
        HELLO,
      )
    })

    it('35. a blank mime type falls back to application/octet-stream', async () => {
      const res = await put('blob.bin', HELLO, '')
      expect(res.attachment.mime).toBe('application/octet-stream')
      expect(res.block.mime).toBe('application/octet-stream')
    })

    it('36. a transcript read can leave out the bytes of images it can refetch', async () => {
      await put('mock.png', PNG, 'image/png')
      const linked = { type: 'image' as const, mime: 'image/png', data: PNG, attachment_id: 'a_001' }
      const unlinked = { type: 'image' as const, mime: 'image/png', data: 'eHl6' }
      await h.call('session::append', {
        session_id: s,
        message: { role: 'user', content: [linked, unlinked], timestamp: 0 },
      })
      const full = (await h.call('session::messages', { session_id: s })).messages[0].message!.content
      expect(full).toStrictEqual([linked, unlinked])
      expect('attachment_id' in full[1]).toBe(false)
      const lean = [{ ...linked, data: '' }, unlinked]
      expect(
        (await h.call('session::messages', { session_id: s, include_image_data: false })).messages[0].message!
          .content,
      ).toStrictEqual(lean)
      expect(
        (await h.call('session::get-message', {
          session_id: s,
          entry_id: 'e_001',
          include_image_data: false,
        }))!.entry,
      ).toMatchObject({ message: { content: lean } })
      expect(await h.entry(s, 'e_001')).toMatchObject({ message: { content: [linked, unlinked] } })
      expect((await h.call('session::get-attachment', { session_id: s, attachment_id: 'a_001' }))?.data).toBe(
        PNG,
      )
    })

    it('37. an image linked to a stored original is protected and forked like a file reference', async () => {
      await put('mock.png', PNG, 'image/png')
      await h.call('session::append', {
        session_id: s,
        message: {
          role: 'user',
          content: [{ type: 'image', mime: 'image/png', data: PNG, attachment_id: 'a_001' }],
          timestamp: 0,
        },
      })
      await rejects(
        h.call('session::delete-attachment', { session_id: s, attachment_id: 'a_001' }),
        'session/attachment_in_use',
      )
      await h.call('session::fork', { session_id: s, entry_id: 'e_001' })
      const copy = await h.call('session::get-attachment', { session_id: 's_002', attachment_id: 'a_001' })
      expect(copy?.attachment.name).toBe('mock.png')
      expect(copy?.attachment.session_id).toBe('s_002')
      expect(copy?.data).toBe(PNG)
    })

    it('2.6 set-draft is event-silent and updated_at-neutral with attachments too (D17 draft half)', async () => {
      const f = h.sink()
      for (const t of [
        'session::meta-updated',
        'session::message-added',
        'session::created',
        'session::status-changed',
      ] as const)
        f.bind(t)
      await put('hello.txt', HELLO)
      h.clock.advance(250)
      await h.call('session::set-draft', { session_id: s, draft: 'x', attachment_ids: ['a_001'] })
      await h.call('session::delete-attachment', { session_id: s, attachment_id: 'a_001' })
      expect(await f.got()).toStrictEqual([])
      expect((await h.meta(s)).updated_at).toBe(T0)
    })

    it('2.14 a referenced image inside a function result is copied by fork and protected', async () => {
      await put('plot.png', PNG, 'image/png')
      await h.call('session::append', {
        session_id: s,
        message: {
          role: 'user',
          content: [
            {
              type: 'function_result',
              function_call_id: 'c1',
              content: [{ type: 'image', mime: 'image/png', data: PNG, attachment_id: 'a_001' }],
            },
          ],
          timestamp: 0,
        },
      })
      await rejects(
        h.call('session::delete-attachment', { session_id: s, attachment_id: 'a_001' }),
        'session/attachment_in_use',
      )
      await h.call('session::fork', { session_id: s, entry_id: 'e_001' })
      expect(await list('s_002')).toStrictEqual(['a_001'])
    })

    it('7.2 list-attachments sorts by created_at, then id', async () => {
      h.clock.advance(5)
      await put('first.txt', HELLO)
      h.clock.advance(-5)
      await put('earlier.txt', HELLO)
      await put('same-time.txt', HELLO)
      expect(await list()).toStrictEqual(['a_002', 'a_003', 'a_001'])
    })

    it('D9. set-draft with only attachment_ids (no draft) clears the draft text', async () => {
      await put('hello.txt', HELLO)
      await h.call('session::set-draft', { session_id: s, draft: 'typed' })
      expect(await h.call('session::set-draft', { session_id: s, attachment_ids: ['a_001'] })).toMatchObject({
        draft: null,
        attachments: [helloMeta()],
      })
      const meta = await h.meta(s)
      expect('draft' in meta).toBe(false)
      expect(meta.draft_attachments).toStrictEqual([helloMeta()])
    })

    it('D13. delete-attachment refuses an attachment referenced only on an abandoned branch', async () => {
      const { block } = await put('hello.txt', HELLO)
      await h.say(s, 'root')
      await h.call('session::append', {
        session_id: s,
        message: { role: 'user', content: [block], timestamp: 0 },
      })
      await h.call('session::set-active-leaf', { session_id: s, entry_id: 'e_001' })
      await h.say(s, 'other branch')
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001', 'e_003'])
      await rejects(
        h.call('session::delete-attachment', { session_id: s, attachment_id: 'a_001' }),
        'session/attachment_in_use',
      )
    })

    it('7.2 an attachment no message references can be deleted', async () => {
      await put('hello.txt', HELLO)
      await h.say(s, 'no reference')
      expect(
        await h.call('session::delete-attachment', { session_id: s, attachment_id: 'a_001' }),
      ).toStrictEqual({ deleted: true })
      expect(await list()).toStrictEqual([])
    })
  })
}

/** Scenario 27 needs a store configured with a 4-byte limit: run by the in-process suites only. */
export function attachmentLimitFeature(h: Harness): void {
  describe('attachments (configured limit)', () => {
    it('27. an upload over the configured limit is refused', async () => {
      const s = await h.bare()
      await rejects(
        h.call('session::put-attachment', {
          session_id: s,
          name: 'hello.txt',
          mime: 'text/plain',
          data: HELLO,
        }),
        'session/attachment_too_large',
      )
      expect((await h.call('session::list-attachments', { session_id: s })).attachments).toStrictEqual([])
      expect(
        (
          await h.call('session::put-attachment', {
            session_id: s,
            name: 'four.txt',
            mime: 'text/plain',
            data: 'aGVsbA==',
          })
        ).attachment.size,
      ).toBe(4)
    })
  })
}
