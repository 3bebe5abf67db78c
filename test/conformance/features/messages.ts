import { describe, expect, it } from 'vitest'
import { customEntry, emptyAssistant, rejects, user, type Harness } from '../harness.js'

// messages.feature (contract 2.12).
export function messagesFeature(h: Harness): void {
  const compaction = customEntry('compaction')

  describe('messages', () => {
    it('112. an empty session returns an empty page', async () => {
      const s = await h.bare()
      expect(await h.call('session::messages', { session_id: s })).toStrictEqual({ messages: [] })
    })

    it('113. messages come back oldest first with their entry ids', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await h.call('session::append', { session_id: s, message: emptyAssistant() })
      await h.say(s, 'three')
      expect(await h.call('session::messages', { session_id: s })).toStrictEqual({
        messages: [
          { entry_id: 'e_001', message: user('one') },
          { entry_id: 'e_002', message: emptyAssistant() },
          { entry_id: 'e_003', message: user('three') },
        ],
      })
    })

    it('114. roles filters to matching message roles only', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await h.call('session::append', { session_id: s, message: emptyAssistant() })
      await h.say(s, 'three')
      expect(await h.ids({ session_id: s, roles: ['user'] })).toStrictEqual(['e_001', 'e_003'])
      expect(await h.ids({ session_id: s, roles: [] })).toStrictEqual([])
    })

    it('115. cursor pagination walks the path without gaps or overlaps', async () => {
      const s = await h.bare()
      for (let i = 1; i <= 5; i++) await h.say(s, `m${i}`)
      const pages: string[][] = []
      let cursor: string | undefined
      for (;;) {
        const page = await h.call('session::messages', { session_id: s, limit: 2, cursor })
        pages.push(page.messages.map((m) => m.entry_id))
        if (page.next_cursor === undefined) {
          expect(page).not.toHaveProperty('next_cursor')
          break
        }
        cursor = page.next_cursor
      }
      expect(pages).toStrictEqual([['e_001', 'e_002'], ['e_003', 'e_004'], ['e_005']])
    })

    it('116. after_entry_id returns only entries strictly after it', async () => {
      const s = await h.bare()
      for (const t of ['one', 'two', 'three']) await h.say(s, t)
      expect(await h.ids({ session_id: s, after_entry_id: 'e_001' })).toStrictEqual(['e_002', 'e_003'])
      expect(await h.call('session::messages', { session_id: s, after_entry_id: 'e_003' })).toStrictEqual({
        messages: [],
      })
    })

    it('117. after_entry_id off the requested path is rejected', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await rejects(
        h.call('session::messages', { session_id: s, after_entry_id: 'ghost' }),
        'session/invalid_cursor',
      )
    })

    it('118. after_entry_id works with include_custom and paginates', async () => {
      const s = await h.bare()
      await h.say(s, 'm1')
      await h.call('session::append', { session_id: s, custom: compaction })
      await h.say(s, 'm2')
      await h.say(s, 'm3')
      const first = await h.call('session::messages', {
        session_id: s,
        after_entry_id: 'e_002',
        include_custom: true,
        limit: 1,
      })
      expect(first.messages.map((m) => m.entry_id)).toStrictEqual(['e_003'])
      expect(typeof first.next_cursor).toBe('string')
      const next = await h.call('session::messages', {
        session_id: s,
        cursor: first.next_cursor,
        include_custom: true,
      })
      expect(next).toStrictEqual({ messages: [{ entry_id: 'e_004', message: user('m3') }] })
      await rejects(
        h.call('session::messages', { session_id: s, after_entry_id: 'e_002' }),
        'session/invalid_cursor',
      )
    })

    it('119. a malformed cursor is rejected', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await rejects(
        h.call('session::messages', { session_id: s, cursor: '!!garbage!!' }),
        'session/invalid_cursor',
      )
    })

    it('120. from_entry_id returns the chain up to that entry', async () => {
      const s = await h.bare()
      for (const t of ['one', 'two', 'three']) await h.say(s, t)
      expect(await h.ids({ session_id: s, from_entry_id: 'e_002' })).toStrictEqual(['e_001', 'e_002'])
    })

    it('121. custom entries appear only with include_custom, in position', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await h.call('session::append', { session_id: s, custom: compaction })
      await h.say(s, 'three')
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001', 'e_003'])
      const { messages } = await h.call('session::messages', { session_id: s, include_custom: true })
      expect(messages).toHaveLength(3)
      // A custom item carries neither `message` nor `origin`.
      expect(messages[1]).toStrictEqual({
        entry_id: 'e_002',
        custom: { custom_type: 'compaction', data: { marker: 'compaction' } },
      })
    })

    it('122. a roles filter drops custom entries even with include_custom', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await h.call('session::append', { session_id: s, custom: compaction })
      await h.call('session::append', { session_id: s, message: emptyAssistant() })
      expect(await h.ids({ session_id: s, roles: ['user'], include_custom: true })).toStrictEqual(['e_001'])
    })

    it('123. unknown session and unknown from_entry_id are rejected', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await rejects(h.call('session::messages', { session_id: 's_404' }), 'session/not_found')
      await rejects(
        h.call('session::messages', { session_id: s, from_entry_id: 'ghost' }),
        'session/entry_not_found',
      )
    })
  })
}
