import { describe, expect, it } from 'vitest'
import {
  assistant,
  customMessage,
  emptyAssistant,
  functionResult,
  rejects,
  T0,
  text,
  user,
  type Harness,
} from '../harness.js'

// Rules of contract sections 1-4 that no scenario pins; named after their section.
export function rulesFeature(h: Harness): void {
  describe('contract rules without a scenario', () => {
    it('1.9 entry ids are scoped per session; an id of another session is unknown here', async () => {
      const [s1, s2] = [await h.bare(), await h.bare()]
      await h.say(s1, 'one', { entry_id: 'shared' })
      expect(await h.say(s2, 'two', { entry_id: 'shared' })).toStrictEqual({
        entry_id: 'shared',
        parent_id: null,
        timestamp: T0,
      })
      expect((await h.meta(s2)).message_count).toBe(1)
      await h.say(s1, 'only in s1')
      await rejects(h.say(s2, 'x', { parent_id: 'e_001' }), 'session/parent_not_found')
      await rejects(
        h.call('session::set-active-leaf', { session_id: s2, entry_id: 'e_001' }),
        'session/entry_not_found',
      )
    })

    it('1.6 a supplied empty metadata object is stored and serialized as {}', async () => {
      const res = await h.call('session::create', { metadata: {} })
      expect(res.meta.metadata).toStrictEqual({})
      expect((await h.meta(res.session_id)).metadata).toStrictEqual({})
    })

    it('2.4 a malformed list cursor is rejected', async () => {
      await h.bare()
      await rejects(h.call('session::list', { cursor: '!!garbage!!' }), 'session/invalid_cursor')
      await rejects(h.call('session::list', { cursor: btoa('{"id":"s_001"}') }), 'session/invalid_cursor')
    })

    it('2.4 a list cursor still resumes after the session it names was deleted', async () => {
      for (let i = 0; i < 4; i++) await h.bare()
      const first = await h.call('session::list', { limit: 2, order: 'created_asc' })
      await h.call('session::delete', { session_id: 's_002' })
      const next = await h.call('session::list', {
        limit: 2,
        order: 'created_asc',
        cursor: first.next_cursor,
      })
      expect(next).toStrictEqual({ sessions: [await h.meta('s_003'), await h.meta('s_004')] })
    })

    it('2.4 list filters are ANDed', async () => {
      await h.bare({ metadata: { owner: 'u_1' } })
      const s2 = await h.bare({ metadata: { owner: 'u_1' }, kind: 'e2e' })
      const s3 = await h.bare({ metadata: { owner: 'u_1' }, kind: 'e2e' })
      await h.call('session::set-status', { session_id: s2, status: 'done' })
      await h.call('session::set-status', { session_id: s3, status: 'done' })
      await h.call('session::set-meta', { session_id: s3, metadata: { owner: 'u_2' } })
      const { sessions } = await h.call('session::list', {
        status: 'done',
        kinds: ['e2e'],
        metadata: { owner: 'u_1' },
      })
      expect(sessions.map((m) => m.session_id)).toStrictEqual(['s_002'])
    })

    it('2.5 meta-updated omits metadata when the session has none', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::meta-updated')
      await h.call('session::set-meta', { session_id: s, description: 'd' })
      expect(await f.got('session::meta-updated')).toStrictEqual([
        { session_id: s, title: '', description: 'd', timestamp: T0 },
      ])
    })

    it('2.9 appends issued together: the same entry_id commits once, and appends without parent form a chain', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      const same = await Promise.all([h.say(s, 'a', { entry_id: 'dup' }), h.say(s, 'b', { entry_id: 'dup' })])
      expect(same).toStrictEqual([
        { entry_id: 'dup', parent_id: null, timestamp: T0 },
        { entry_id: 'dup', parent_id: null, timestamp: T0 },
      ])
      // Whatever order a transport delivers them in, ids follow commit order and so do parents.
      const chain = (await Promise.all([h.say(s, 'x'), h.say(s, 'y'), h.say(s, 'z')])).sort((a, b) =>
        a.entry_id.localeCompare(b.entry_id),
      )
      expect(chain.map((r) => [r.entry_id, r.parent_id])).toStrictEqual([
        ['e_001', 'dup'],
        ['e_002', 'e_001'],
        ['e_003', 'e_002'],
      ])
      expect(await f.got('session::message-added')).toHaveLength(4)
      expect((await h.meta(s)).message_count).toBe(4)
    })

    it('2.9 a custom entry without data stores data null; its event carries the entry origin', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      await h.call('session::append', {
        session_id: s,
        custom: { custom_type: 'marker' } as never,
        origin: { turn_id: 't' },
      })
      expect(await h.entry(s, 'e_001')).toStrictEqual({
        id: 'e_001',
        parent_id: null,
        timestamp: T0,
        revision: 0,
        origin: { turn_id: 't' },
        kind: 'custom',
        custom_type: 'marker',
        data: null,
      })
      expect(await f.got('session::message-added')).toStrictEqual([
        {
          session_id: s,
          entry_id: 'e_001',
          parent_id: null,
          custom: { custom_type: 'marker', data: null },
          origin: { turn_id: 't' },
          timestamp: T0,
        },
      ])
    })

    it('2.11 details on a custom-role message are set; the event timestamp is the update time', async () => {
      const s = await h.bare()
      await h.call('session::append', { session_id: s, message: customMessage('notice', 'heads up') })
      const f = h.sink()
      f.bind('session::message-updated')
      h.clock.advance(30)
      await h.call('session::update-message', {
        session_id: s,
        entry_id: 'e_001',
        content: [text('later')],
        details: { seen: true },
      })
      const updated = { ...customMessage('notice', 'later'), details: { seen: true } }
      expect(await h.entry(s, 'e_001')).toMatchObject({ timestamp: T0, revision: 1, message: updated })
      expect(await f.got('session::message-updated')).toStrictEqual([
        { session_id: s, entry_id: 'e_001', message: updated, revision: 1, timestamp: T0 + 30 },
      ])
    })

    it('2.12 a cursor takes precedence over after_entry_id; limit 0 clamps to one', async () => {
      const s = await h.bare()
      for (const t of ['a', 'b', 'c', 'd']) await h.say(s, t)
      const first = await h.call('session::messages', { session_id: s, limit: 0 })
      expect(first.messages.map((m) => m.entry_id)).toStrictEqual(['e_001'])
      expect(
        await h.ids({ session_id: s, cursor: first.next_cursor, after_entry_id: 'e_003' }),
      ).toStrictEqual(['e_002', 'e_003', 'e_004'])
    })

    it('2.12 message items carry their entry origin; custom items never do', async () => {
      const s = await h.bare()
      await h.say(s, 'one', { origin: { turn_id: 't_1' } })
      await h.call('session::append', {
        session_id: s,
        custom: { custom_type: 'c', data: 1 },
        origin: { turn_id: 't_2' },
      })
      await h.say(s, 'three')
      expect(
        (await h.call('session::messages', { session_id: s, include_custom: true })).messages,
      ).toStrictEqual([
        { entry_id: 'e_001', message: user('one'), origin: { turn_id: 't_1' } },
        { entry_id: 'e_002', custom: { custom_type: 'c', data: 1 } },
        { entry_id: 'e_003', message: user('three') },
      ])
    })

    it('2.12/2.13 include_image_data false blanks only images linked to a stored original', async () => {
      const s = await h.bare()
      const linked = { type: 'image' as const, mime: 'image/png', data: 'bGlua2Vk', attachment_id: 'a_001' }
      const inline = { type: 'image' as const, mime: 'image/png', data: 'eHl6' }
      const nested = { type: 'function_result' as const, function_call_id: 'c1', content: [linked, inline] }
      const message = { ...user('look'), content: [text('look'), linked, inline, nested] }
      await h.call('session::append', { session_id: s, message })
      const blanked = {
        ...message,
        content: [
          text('look'),
          { ...linked, data: '' },
          inline,
          { ...nested, content: [{ ...linked, data: '' }, inline] },
        ],
      }
      expect(
        (await h.call('session::messages', { session_id: s, include_image_data: false })).messages,
      ).toStrictEqual([{ entry_id: 'e_001', message: blanked }])
      expect(
        await h.call('session::get-message', { session_id: s, entry_id: 'e_001', include_image_data: false }),
      ).toStrictEqual({
        entry: {
          id: 'e_001',
          parent_id: null,
          timestamp: T0,
          revision: 0,
          kind: 'message',
          message: blanked,
        },
      })
      // Storage is untouched: default reads still return the bytes.
      expect((await h.call('session::messages', { session_id: s })).messages).toStrictEqual([
        { entry_id: 'e_001', message },
      ])
      expect(await h.entry(s, 'e_001')).toMatchObject({ message })
    })

    it('2.14 fork remaps message_order after/moved on the copied path and keeps unknown ids', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await h.call('session::append', { session_id: s, message: emptyAssistant(), origin: { turn_id: 't' } })
      await h.call('session::append', {
        session_id: s,
        custom: {
          custom_type: 'message_order',
          data: { after: 'e_001', moved: ['e_002', 'e_999'], note: 'n' },
        },
      })
      h.clock.advance(50)
      const res = await h.call('session::fork', { session_id: s, entry_id: 'e_003' })
      expect(res.meta).toMatchObject({ message_count: 2, created_at: T0 + 50 })
      const items = (await h.call('session::messages', { session_id: res.session_id, include_custom: true }))
        .messages
      expect(items[2]).toStrictEqual({
        entry_id: 'e_006',
        custom: {
          custom_type: 'message_order',
          data: { after: 'e_004', moved: ['e_005', 'e_999'], note: 'n' },
        },
      })
      // Copies keep their original timestamps and origins.
      expect(await h.entry(res.session_id, 'e_005')).toStrictEqual({
        id: 'e_005',
        parent_id: 'e_004',
        timestamp: T0,
        revision: 0,
        origin: { turn_id: 't' },
        kind: 'message',
        message: emptyAssistant(),
      })
    })

    it('2.14 a fork at a function result copies the whole path with fresh ids', async () => {
      const s = await h.bare()
      await h.call('session::append-many', { session_id: s, messages: [user('q'), functionResult('c1')] })
      const res = await h.call('session::fork', { session_id: s, entry_id: 'e_002' })
      expect((await h.call('session::messages', { session_id: res.session_id })).messages).toStrictEqual([
        { entry_id: 'e_003', message: user('q') },
        { entry_id: 'e_004', message: functionResult('c1') },
      ])
    })

    it('4.3 metadata subset-equality compares values deeply, with no partial array or object match', async () => {
      await h.bare({ metadata: { owner: 'u_1', tags: ['a', 'b'], cfg: { x: 1, y: [true, null] } } })
      await h.bare({ metadata: { owner: 'u_1', tags: ['b', 'a'] } })
      const f = h.sink()
      f.bind('session::meta-updated', { metadata: { cfg: { x: 1, y: [true, null] } } })
      const match = async (metadata: Record<string, unknown>) =>
        (await h.call('session::list', { metadata: metadata as never, order: 'created_asc' })).sessions.map(
          (m) => m.session_id,
        )
      expect(await match({ tags: ['a', 'b'] })).toStrictEqual(['s_001'])
      expect(await match({ tags: ['a'] })).toStrictEqual([])
      expect(await match({ cfg: { x: 1, y: [true, null] } })).toStrictEqual(['s_001'])
      expect(await match({ cfg: { x: 1 } })).toStrictEqual([])
      expect(await match({ owner: 'u_1', missing: null })).toStrictEqual([])
      expect(await match({ owner: 'u_1' })).toStrictEqual(['s_001', 's_002'])
      await h.call('session::set-meta', { session_id: 's_002', title: 'x' })
      await h.call('session::set-meta', { session_id: 's_001', title: 'y' })
      expect((await f.got('session::meta-updated')).map((e) => e.session_id)).toStrictEqual(['s_001'])
    })

    it('2 conventions: messages and list limits default to 50 and clamp to 500', async () => {
      const s = await h.bare()
      await h.call('session::append-many', {
        session_id: s,
        messages: Array.from({ length: 501 }, (_, i) => user(`m${i}`)),
      })
      const page = await h.call('session::messages', { session_id: s })
      expect(page.messages).toHaveLength(50)
      expect(typeof page.next_cursor).toBe('string')
      const big = await h.call('session::messages', { session_id: s, limit: 10_000 })
      expect(big.messages).toHaveLength(500)
      expect(
        (await h.call('session::messages', { session_id: s, cursor: big.next_cursor })).messages.map(
          (m) => m.entry_id,
        ),
      ).toStrictEqual(['e_501'])
      await Promise.all(Array.from({ length: 50 }, () => h.bare()))
      const sessions = await h.call('session::list', {})
      expect(sessions.sessions).toHaveLength(50)
      expect(typeof sessions.next_cursor).toBe('string')
      expect((await h.call('session::list', { limit: 51 })).sessions).toHaveLength(51)
    })

    it('4.2 a roles filter of [] matches nothing', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added', { roles: [] })
      f.bind('session::message-updated', { roles: [] })
      await h.say(s, 'hi')
      await h.call('session::update-message', { session_id: s, entry_id: 'e_001', content: [] })
      expect(await f.got()).toHaveLength(0)
    })

    it('2.4 cursors page through caller-chosen ids of any characters, ties broken by id', async () => {
      const ids = ['../escape/chat 42:?', 'chat-é', 'A', 'z%2F', '{"id":1}']
      for (const session_id of ids) await h.call('session::ensure', { session_id })
      const sorted = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      for (const [order, expected] of [
        ['created_asc', sorted],
        ['created_desc', [...sorted].reverse()],
      ] as const) {
        const seen: string[] = []
        let cursor: string | undefined
        do {
          const page = await h.call('session::list', { order, limit: 2, cursor })
          seen.push(...page.sessions.map((m) => m.session_id))
          cursor = page.next_cursor
        } while (cursor !== undefined)
        expect(seen).toStrictEqual(expected)
      }
      // The same ids work for entry reads too.
      await h.say('../escape/chat 42:?', 'hi')
      expect(await h.ids({ session_id: '../escape/chat 42:?' })).toStrictEqual(['e_001'])
    })

    // Core bug (reported): packages/core/src/validation/validate.ts `json` assigns parsed keys with
    // `out[k] = …`, so a JSON key named "__proto__" (an own property after JSON.parse, as any
    // transport delivers it) sets the copy's prototype instead and the key is silently dropped.
    // Flip to `it` once validate.ts defines such keys as own properties.
    it('1.3 blocks round-trip byte-for-byte, even arguments with a key named "__proto__"', async () => {
      const s = await h.bare()
      const args = JSON.parse('{"__proto__":{"cmd":"rm"},"path":"/"}') as Record<string, unknown>
      const message = assistant(
        [{ type: 'function_call', id: 'c1', function_id: 'shell::run', arguments: args as never }],
        'function_call',
      )
      await h.call('session::append', { session_id: s, message })
      const stored = await h.entry(s, 'e_001')
      expect(JSON.stringify(stored.kind === 'message' && stored.message.content)).toBe(
        '[{"type":"function_call","id":"c1","function_id":"shell::run","arguments":{"__proto__":{"cmd":"rm"},"path":"/"}}]',
      )
    })

    it('2.1 metadata is stored as given, even with a key named "__proto__"', async () => {
      const metadata = JSON.parse('{"__proto__":{"evil":true},"owner":"u_1"}') as Record<string, never>
      const { session_id } = await h.call('session::create', { metadata })
      expect(JSON.stringify((await h.meta(session_id)).metadata)).toBe(
        '{"__proto__":{"evil":true},"owner":"u_1"}',
      )
    })
  })
}
