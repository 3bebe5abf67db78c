import { describe, expect, it } from 'vitest'
import { emptyAssistant, rejects, T0, text, user, type Harness } from '../harness.js'

// The contract's derived checks (section 6, "Derived checks") that concern the 14 base
// operations, plus check-order rules of sections 2-3 that no scenario pins.
export function derivedChecks(h: Harness): void {
  describe('derived checks', () => {
    it("D1. ensure with kind applies it only on creation; existing session's kind unchanged", async () => {
      expect((await h.call('session::ensure', { session_id: 'bot', kind: 'automation' })).meta.kind).toBe(
        'automation',
      )
      const again = await h.call('session::ensure', { session_id: 'bot', kind: 'e2e' })
      expect(again).toMatchObject({ created: false, meta: { kind: 'automation' } })
      expect((await h.meta('bot')).kind).toBe('automation')
    })

    it('D2. list kinds ["e2e"] returns only e2e sessions; omitted returns all; [] returns none', async () => {
      await h.bare()
      await h.bare({ kind: 'e2e' })
      await h.bare({ kind: 'automation' })
      const ids = async (kinds?: ('user' | 'automation' | 'e2e')[]) =>
        (await h.call('session::list', { order: 'created_asc', kinds })).sessions.map((m) => m.session_id)
      expect(await ids(['e2e'])).toStrictEqual(['s_002'])
      expect(await ids(['user', 'automation'])).toStrictEqual(['s_001', 's_003'])
      expect(await ids()).toStrictEqual(['s_001', 's_002', 's_003'])
      expect(await ids([])).toStrictEqual([])
    })

    it('D3. set-meta never changes kind; fork copies kind', async () => {
      const s = await h.bare({ kind: 'automation' })
      await h.say(s, 'run')
      expect(
        (await h.call('session::set-meta', { session_id: s, title: 'x', metadata: { kind: 'user' } })).meta
          .kind,
      ).toBe('automation')
      expect((await h.call('session::fork', { session_id: s, entry_id: 'e_001' })).meta.kind).toBe(
        'automation',
      )
      expect((await h.meta('s_002')).kind).toBe('automation')
    })

    it('D4. update-message with usage on an assistant stores it; on a user message → session/invalid_entry_kind', async () => {
      const s = await h.bare()
      await h.call('session::append', { session_id: s, message: emptyAssistant() })
      await h.say(s, 'hi')
      const usage = { input: 12, output: 34, cache_read: 1, cost_usd: 0.25 }
      expect(
        await h.call('session::update-message', {
          session_id: s,
          entry_id: 'e_001',
          content: [text('done')],
          usage,
        }),
      ).toStrictEqual({ updated: true, revision: 1 })
      expect(await h.entry(s, 'e_001')).toMatchObject({ message: { usage, content: [text('done')] } })
      await rejects(
        h.call('session::update-message', { session_id: s, entry_id: 'e_002', content: [], usage }),
        'session/invalid_entry_kind',
      )
      expect((await h.entry(s, 'e_002')).revision).toBe(0)
    })

    it("D5. update-message event origin equals the request's origin; stored entry origin unchanged", async () => {
      const s = await h.bare()
      await h.call('session::append', {
        session_id: s,
        message: emptyAssistant(),
        origin: { turn_id: 't_1' },
      })
      const f = h.sink()
      f.bind('session::message-updated')
      await h.call('session::update-message', {
        session_id: s,
        entry_id: 'e_001',
        content: [text('a')],
        origin: { turn_id: 't_2' },
      })
      await h.call('session::update-message', { session_id: s, entry_id: 'e_001', content: [text('ab')] })
      const got = await f.got('session::message-updated')
      expect(got[0].origin).toStrictEqual({ turn_id: 't_2' })
      expect(got[1]).not.toHaveProperty('origin')
      expect((await h.entry(s, 'e_001')).origin).toStrictEqual({ turn_id: 't_1' })
      expect((await h.call('session::messages', { session_id: s })).messages[0].origin).toStrictEqual({
        turn_id: 't_1',
      })
    })

    it('D6. list desc orders break timestamp ties by session_id descending; created_asc ascending', async () => {
      for (let i = 0; i < 3; i++) await h.bare()
      const ids = async (order: 'created_asc' | 'created_desc' | 'updated_desc') =>
        (await h.call('session::list', { order })).sessions.map((m) => m.session_id)
      expect(await ids('created_asc')).toStrictEqual(['s_001', 's_002', 's_003'])
      expect(await ids('created_desc')).toStrictEqual(['s_003', 's_002', 's_001'])
      expect(await ids('updated_desc')).toStrictEqual(['s_003', 's_002', 's_001'])
    })

    it('D7. messages with a garbage cursor on a session with no leaf returns []', async () => {
      const s = await h.bare()
      expect(
        await h.call('session::messages', { session_id: s, cursor: '!!garbage!!', after_entry_id: 'ghost' }),
      ).toStrictEqual({ messages: [] })
    })

    it('D8. append replay (existing id) with a non-existent parent_id succeeds as a no-op', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added')
      await h.say(s, 'hi', { entry_id: 'turn-1' })
      expect(await h.say(s, 'hi', { entry_id: 'turn-1', parent_id: 'nope' })).toStrictEqual({
        entry_id: 'turn-1',
        parent_id: null,
        timestamp: T0,
      })
      expect(await f.got('session::message-added')).toHaveLength(1)
      // The shape check still runs first: a replay with neither message nor custom fails.
      await rejects(
        h.call('session::append', { session_id: s, entry_id: 'turn-1' }),
        'session/invalid_request',
      )
    })

    it('D10. set-status error (reason x) then error (no reason) emits and clears the reason', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::status-changed')
      await h.call('session::set-status', { session_id: s, status: 'error', reason: 'x' })
      expect(await h.call('session::set-status', { session_id: s, status: 'error' })).toStrictEqual({
        status: 'error',
        previous_status: 'error',
      })
      const got = await f.got('session::status-changed')
      expect(got).toHaveLength(2)
      expect(got[1]).toStrictEqual({
        session_id: s,
        status: 'error',
        previous_status: 'error',
        timestamp: T0,
      })
      expect(await h.meta(s)).not.toHaveProperty('status_reason')
    })

    it('D16. append-many entries all carry the same entry timestamp; origin is copied onto every entry and event', async () => {
      const s = await h.bare()
      h.clock.advance(42)
      const f = h.sink()
      f.bind('session::message-added')
      const origin = { turn_id: 't_7' }
      await h.call('session::append-many', {
        session_id: s,
        messages: [user('a'), emptyAssistant(), user('b')],
        origin,
      })
      for (const id of ['e_001', 'e_002', 'e_003'])
        expect(await h.entry(s, id)).toMatchObject({ timestamp: T0 + 42, origin, revision: 0 })
      const got = await f.got('session::message-added')
      expect(got.map((e) => [e.timestamp, e.origin])).toStrictEqual([
        [T0 + 42, origin],
        [T0 + 42, origin],
        [T0 + 42, origin],
      ])
      expect(await h.meta(s)).toMatchObject({ updated_at: T0 + 42, message_count: 3 })
    })

    it('D17. set-active-leaf leaves updated_at unchanged (never reorders list updated_desc)', async () => {
      const s1 = await h.bare()
      await h.say(s1, 'one')
      await h.say(s1, 'two')
      h.clock.advance(10)
      await h.bare()
      h.clock.advance(10)
      await h.call('session::set-active-leaf', { session_id: s1, entry_id: 'e_001' })
      expect((await h.meta(s1)).updated_at).toBe(T0)
      expect((await h.call('session::list', {})).sessions.map((m) => m.session_id)).toStrictEqual([
        's_002',
        's_001',
      ])
    })

    it('D18. an unknown extra key in a request is ignored; an unknown key in a binding config is rejected', async () => {
      const s = await h.bare()
      expect(await h.raw('session::get', { session_id: s, bogus: 1 })).toStrictEqual({
        meta: await h.meta(s),
      })
      expect(
        await h.raw('session::append', { session_id: s, message: { ...user('x'), extra: true }, bogus: [1] }),
      ).toStrictEqual({
        entry_id: 'e_001',
        parent_id: null,
        timestamp: T0,
      })
      expect(await h.entry(s, 'e_001')).toStrictEqual({
        id: 'e_001',
        parent_id: null,
        timestamp: T0,
        revision: 0,
        kind: 'message',
        message: user('x'),
      })
      expect((await h.bindError('session::deleted', { bogus: 1 }))?.message).toContain('unknown field')
    })

    it('D19. fork emits only session::created — no message-added for the copied entries', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await h.say(s, 'two')
      const f = h.sink()
      for (const t of [
        'session::created',
        'session::message-added',
        'session::message-updated',
        'session::status-changed',
        'session::meta-updated',
        'session::deleted',
      ] as const)
        f.bind(t)
      await h.call('session::fork', { session_id: s, entry_id: 'e_002' })
      const got = await f.got()
      expect(got.map((d) => d.type)).toStrictEqual(['session::created'])
      // The source is untouched by the fork.
      expect((await h.meta(s)).updated_at).toBe(T0)
    })

    it('2.11 an expected_revision mismatch is answered before usage and details are validated', async () => {
      const s = await h.bare()
      await h.say(s, 'hi')
      const res = await h.call('session::update-message', {
        session_id: s,
        entry_id: 'e_001',
        content: [],
        expected_revision: 5,
        usage: { input: 1 },
        details: { x: 1 },
      })
      expect(res).toStrictEqual({ updated: false, revision: 0 })
    })

    it('2 conventions: null request keys behave like absent keys', async () => {
      const res = await h.raw('session::create', {
        title: null,
        description: null,
        metadata: null,
        kind: null,
      })
      expect(res).toStrictEqual({
        session_id: 's_001',
        meta: {
          session_id: 's_001',
          title: '',
          description: '',
          status: 'idle',
          kind: 'user',
          created_at: T0,
          updated_at: T0,
          message_count: 0,
        },
      })
      await h.say('s_001', 'one')
      expect(
        await h.raw('session::append', {
          session_id: 's_001',
          message: user('two'),
          parent_id: null,
          entry_id: null,
          origin: null,
          custom: null,
        }),
      ).toStrictEqual({
        entry_id: 'e_002',
        parent_id: 'e_001',
        timestamp: T0,
      })
      expect(
        await h.raw('session::set-meta', {
          session_id: 's_001',
          title: null,
          description: null,
          metadata: null,
        }),
      ).toStrictEqual({ meta: await h.meta('s_001') })
      expect((await h.meta('s_001')).updated_at).toBe(T0)
    })
  })
}
