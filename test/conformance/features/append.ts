import { describe, expect, it } from 'vitest'
import {
  assistant,
  customEntry,
  emptyAssistant,
  functionResult,
  rejects,
  T0,
  text,
  user,
  type Harness,
} from '../harness.js'

// append.feature and append_many.feature (contract 2.9, 2.10).
export function appendFeature(h: Harness): void {
  describe('append', () => {
    it('1. first append becomes the root', async () => {
      const s = await h.bare()
      expect(await h.say(s, 'hello')).toStrictEqual({ entry_id: 'e_001', parent_id: null, timestamp: T0 })
    })

    it('2. appends chain from the active leaf', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      expect(await h.say(s, 'two')).toStrictEqual({ entry_id: 'e_002', parent_id: 'e_001', timestamp: T0 })
    })

    it('3. appends maintain message_count and updated_at', async () => {
      const s = await h.bare()
      h.clock.advance(500)
      await h.say(s, 'hello')
      const meta = await h.meta(s)
      expect(meta).toMatchObject({ message_count: 1, created_at: T0, updated_at: T0 + 500 })
    })

    it('4. appending an existing entry_id is a complete no-op', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      const first = await h.say(s, 'hi', { entry_id: 'turn1-user' })
      h.clock.advance(100)
      const second = await h.say(s, 'something else', { entry_id: 'turn1-user' })
      expect(first).toStrictEqual({ entry_id: 'turn1-user', parent_id: null, timestamp: T0 })
      expect(second).toStrictEqual(first)
      expect(await f.got('session::message-added')).toHaveLength(1)
      const entry = await h.entry(s, 'turn1-user')
      expect(entry.kind === 'message' && entry.message.content).toStrictEqual([text('hi')])
      expect(await h.meta(s)).toMatchObject({ message_count: 1, updated_at: T0 })
    })

    it('5. an idempotent replay does not move the active leaf', async () => {
      const s = await h.bare()
      await h.say(s, 'first', { entry_id: 'a' })
      expect((await h.say(s, 'newer')).entry_id).toBe('e_001')
      expect(await h.say(s, 'first', { entry_id: 'a' })).toStrictEqual({
        entry_id: 'a',
        parent_id: null,
        timestamp: T0,
      })
      expect(await h.say(s, 'next')).toStrictEqual({ entry_id: 'e_002', parent_id: 'e_001', timestamp: T0 })
    })

    it('6. explicit parent_id creates a branch and moves the leaf', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await h.say(s, 'two')
      expect(await h.say(s, 'branch', { parent_id: 'e_001' })).toStrictEqual({
        entry_id: 'e_003',
        parent_id: 'e_001',
        timestamp: T0,
      })
      expect(await h.say(s, 'next')).toStrictEqual({ entry_id: 'e_004', parent_id: 'e_003', timestamp: T0 })
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001', 'e_003', 'e_004'])
    })

    it('7. appending under an unknown parent is rejected', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      await rejects(h.say(s, 'orphan', { parent_id: 'nope' }), 'session/parent_not_found')
      expect(await f.got()).toHaveLength(0)
      expect(await h.meta(s)).toMatchObject({ message_count: 0, updated_at: T0 })
      expect(await h.ids({ session_id: s })).toStrictEqual([])
    })

    it('8. origin is echoed on the emitted event', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      await h.say(s, 'hello', { origin: { turn_id: 't_9' } })
      expect(await f.got('session::message-added')).toStrictEqual([
        {
          session_id: 's_001',
          entry_id: 'e_001',
          parent_id: null,
          message: user('hello'),
          origin: { turn_id: 't_9' },
          timestamp: T0,
        },
      ])
      expect((await h.entry(s, 'e_001')).origin).toStrictEqual({ turn_id: 't_9' })
    })

    it('9. all four message roles round-trip through storage', async () => {
      const s = await h.bare()
      const sent = [
        user('question'),
        { ...assistant([text('calling')], 'function_call'), usage: { input: 10 } },
        functionResult('c1'),
        {
          role: 'custom' as const,
          custom_type: 'pin',
          content: [text('pinned')],
          display: 'Pinned',
          timestamp: 0,
        },
      ]
      for (const message of sent) await h.call('session::append', { session_id: s, message })
      const { messages } = await h.call('session::messages', { session_id: s })
      expect(messages).toStrictEqual(sent.map((message, i) => ({ entry_id: `e_00${i + 1}`, message })))
    })

    it('10. all five content block kinds round-trip inside one message', async () => {
      const s = await h.bare()
      const content = [
        text('look'),
        { type: 'image' as const, mime: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'thinking' as const, text: 'hmm', signature: 'sig-1' },
        { type: 'function_call' as const, id: 'c1', function_id: 'shell::run', arguments: { cmd: 'ls' } },
        { type: 'function_result' as const, function_call_id: 'c1', content: [text('README.md')] },
      ]
      const message = assistant(content, 'function_call')
      await h.call('session::append', { session_id: s, message })
      expect(await h.call('session::get-message', { session_id: s, entry_id: 'e_001' })).toStrictEqual({
        entry: { id: 'e_001', parent_id: null, timestamp: T0, revision: 0, kind: 'message', message },
      })
    })

    it('11. appending a custom entry emits an event but does not count as a message', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      await h.call('session::append', { session_id: s, custom: customEntry('compaction') })
      expect(await f.got('session::message-added')).toStrictEqual([
        {
          session_id: s,
          entry_id: 'e_001',
          parent_id: null,
          custom: { custom_type: 'compaction', data: { marker: 'compaction' } },
          timestamp: T0,
        },
      ])
      expect((await h.meta(s)).message_count).toBe(0)
      expect(await h.entry(s, 'e_001')).toStrictEqual({
        id: 'e_001',
        parent_id: null,
        timestamp: T0,
        revision: 0,
        kind: 'custom',
        custom_type: 'compaction',
        data: { marker: 'compaction' },
      })
    })

    it('12. exactly one of message / custom is required', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      await rejects(h.call('session::append', { session_id: s }), 'session/invalid_request')
      await rejects(
        h.call('session::append', { session_id: s, message: user('x'), custom: customEntry('c') }),
        'session/invalid_request',
      )
      expect(await f.got()).toHaveLength(0)
      expect(await h.ids({ session_id: s, include_custom: true })).toStrictEqual([])
    })

    it('13. appending to an unknown session is rejected', async () => {
      await rejects(h.say('s_404', 'hello'), 'session/not_found')
    })
  })

  describe('append-many', () => {
    it('14. a batch preserves order and chains the parent links', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      const res = await h.call('session::append-many', {
        session_id: s,
        messages: [user('one'), emptyAssistant(), user('three')],
      })
      expect(res).toStrictEqual({ entry_ids: ['e_001', 'e_002', 'e_003'], last_entry_id: 'e_003' })
      const got = await f.got('session::message-added')
      expect(got.map((e) => [e.entry_id, e.parent_id])).toStrictEqual([
        ['e_001', null],
        ['e_002', 'e_001'],
        ['e_003', 'e_002'],
      ])
      expect(got[2]).toStrictEqual({
        session_id: s,
        entry_id: 'e_003',
        parent_id: 'e_002',
        message: user('three'),
        timestamp: T0,
      })
      expect((await h.meta(s)).message_count).toBe(3)
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001', 'e_002', 'e_003'])
    })

    it('15. a batch chains onto the current active leaf', async () => {
      const s = await h.bare()
      await h.say(s, 'root')
      expect(await h.call('session::append-many', { session_id: s, messages: [user('more')] })).toStrictEqual(
        { entry_ids: ['e_002'], last_entry_id: 'e_002' },
      )
      expect((await h.entry(s, 'e_002')).parent_id).toBe('e_001')
    })

    it('16. a batch under an unknown parent is rejected', async () => {
      const s = await h.bare()
      await rejects(
        h.call('session::append-many', { session_id: s, messages: [user('x')], parent_id: 'ghost' }),
        'session/parent_not_found',
      )
      expect((await h.meta(s)).message_count).toBe(0)
    })

    it('17. an empty batch is rejected', async () => {
      const s = await h.bare()
      await rejects(h.call('session::append-many', { session_id: s, messages: [] }), 'session/empty_batch')
    })

    it('18. append_many is not idempotent by design', async () => {
      const s = await h.bare()
      await h.call('session::append-many', { session_id: s, messages: [user('again')] })
      await h.call('session::append-many', { session_id: s, messages: [user('again')] })
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001', 'e_002'])
    })
  })
}
