import { describe, expect, it } from 'vitest'
import { rejects, T0, user, type Harness } from '../harness.js'

const freshMeta = (session_id: string) => ({
  session_id,
  title: '',
  description: '',
  status: 'idle',
  kind: 'user',
  created_at: T0,
  updated_at: T0,
  message_count: 0,
})

// create.feature, ensure.feature and delete.feature (contract 2.1, 2.2, 2.8).
export function lifecycleFeature(h: Harness): void {
  describe('create', () => {
    it('43. defaults of a bare create', async () => {
      // toStrictEqual pins absent keys too: no metadata, forked_from, status_reason or draft.
      expect(await h.call('session::create', {})).toStrictEqual({
        session_id: 's_001',
        meta: freshMeta('s_001'),
      })
      expect(await h.call('session::get', { session_id: 's_001' })).toStrictEqual({
        meta: freshMeta('s_001'),
      })
    })

    it('44. an explicit kind is persisted on the session', async () => {
      const res = await h.call('session::create', { kind: 'e2e' })
      expect(res.meta.kind).toBe('e2e')
      expect((await h.meta(res.session_id)).kind).toBe('e2e')
    })

    it('45. an unknown kind is rejected', async () => {
      const f = h.sink()
      f.bind('session::created')
      await rejects(h.raw('session::create', { kind: 'robot' }), 'session/invalid_request')
      expect(await f.got()).toHaveLength(0)
      expect((await h.call('session::list', {})).sessions).toStrictEqual([])
    })

    it('46. title, description and metadata are persisted', async () => {
      const res = await h.call('session::create', {
        title: 'Weather',
        description: 'a chat',
        metadata: { owner: 'u_1', tags: ['a', 1] },
      })
      const expected = {
        ...freshMeta('s_001'),
        title: 'Weather',
        description: 'a chat',
        metadata: { owner: 'u_1', tags: ['a', 1] },
      }
      expect(res.meta).toStrictEqual(expected)
      expect(await h.meta('s_001')).toStrictEqual(expected)
    })

    it('47. consecutive creates produce distinct session ids', async () => {
      expect(await h.bare()).toBe('s_001')
      expect(await h.bare()).toBe('s_002')
    })

    it('48. create fires exactly one session::created event with the full payload', async () => {
      const f = h.sink()
      f.bind('session::created')
      await h.call('session::create', { title: 'T', description: 'D' })
      expect(await f.got('session::created')).toStrictEqual([
        { session_id: 's_001', title: 'T', description: 'D', status: 'idle', created_at: T0 },
      ])
    })

    it('49. created events respect the metadata filter', async () => {
      const f = h.sink()
      f.bind('session::created', { metadata: { owner: 'u_1' } })
      await h.bare({ metadata: { owner: 'u_1' } })
      await h.bare({ metadata: { owner: 'u_2' } })
      await h.bare()
      expect((await f.got('session::created')).map((e) => e.session_id)).toStrictEqual(['s_001'])
    })
  })

  describe('delete', () => {
    it('50. delete removes everything and fires deleted', async () => {
      const s = await h.bare()
      await h.say(s, 'hello')
      const f = h.sink()
      f.bind('session::deleted')
      h.clock.advance(7)
      expect(await h.call('session::delete', { session_id: s })).toStrictEqual({ deleted: true })
      expect(await f.got('session::deleted')).toStrictEqual([{ session_id: 's_001', timestamp: T0 + 7 }])
      expect(await h.call('session::get', { session_id: s })).toBeNull()
      expect(await h.call('session::get-message', { session_id: s, entry_id: 'e_001' })).toBeNull()
      await rejects(h.call('session::messages', { session_id: s }), 'session/not_found')
      expect((await h.call('session::list', {})).sessions).toStrictEqual([])
    })

    it('51. deleting an unknown session is a silent false', async () => {
      const f = h.sink()
      f.bind('session::deleted')
      expect(await h.call('session::delete', { session_id: 'ghost' })).toStrictEqual({ deleted: false })
      expect(await f.got()).toHaveLength(0)
    })

    it('52. a second delete is a false no-op', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::deleted')
      await h.call('session::delete', { session_id: s })
      expect(await h.call('session::delete', { session_id: s })).toStrictEqual({ deleted: false })
      expect(await f.got('session::deleted')).toHaveLength(1)
    })

    it('53. a recreated session id starts from scratch', async () => {
      const s = await h.bare()
      await h.say(s, 'one')
      await h.say(s, 'two')
      await h.call('session::delete', { session_id: s })
      h.clock.advance(10)
      const res = await h.call('session::ensure', { session_id: s })
      expect(res).toStrictEqual({
        session_id: s,
        created: true,
        meta: { ...freshMeta(s), created_at: T0 + 10, updated_at: T0 + 10 },
      })
      expect(await h.call('session::messages', { session_id: s })).toStrictEqual({ messages: [] })
      expect((await h.say(s, 'again')).parent_id).toBeNull()
      // The old entries are gone, not merely off the path.
      expect(await h.call('session::get-message', { session_id: s, entry_id: 'e_001' })).toBeNull()
    })

    it('54. deleted events match metadata filters as-of-deletion', async () => {
      const s = await h.bare({ metadata: { owner: 'u_1' } })
      const u1 = h.sink()
      const u2 = h.sink()
      u1.bind('session::deleted', { metadata: { owner: 'u_1' } })
      u2.bind('session::deleted', { metadata: { owner: 'u_2' } })
      await h.call('session::delete', { session_id: s })
      expect(await u1.got('session::deleted')).toHaveLength(1)
      expect(await u2.got()).toHaveLength(0)
    })
  })

  describe('ensure', () => {
    it('72. ensure creates a missing session and fires created', async () => {
      const f = h.sink()
      f.bind('session::created')
      const res = await h.call('session::ensure', { session_id: 'chat-42', title: 'Chat' })
      expect(res).toStrictEqual({
        session_id: 'chat-42',
        created: true,
        meta: { ...freshMeta('chat-42'), title: 'Chat' },
      })
      expect(await f.got('session::created')).toStrictEqual([
        { session_id: 'chat-42', title: 'Chat', description: '', status: 'idle', created_at: T0 },
      ])
    })

    it('73. ensure of an existing session mutates nothing and fires nothing', async () => {
      const f = h.sink()
      f.bind('session::created')
      await h.call('session::ensure', { session_id: 'chat-42', title: 'Chat', metadata: { owner: 'u_1' } })
      h.clock.advance(100)
      const again = await h.call('session::ensure', {
        session_id: 'chat-42',
        title: 'Other',
        description: 'x',
        metadata: { owner: 'u_2' },
        kind: 'e2e',
      })
      const original = { ...freshMeta('chat-42'), title: 'Chat', metadata: { owner: 'u_1' } }
      expect(again).toStrictEqual({ session_id: 'chat-42', created: false, meta: original })
      expect(await h.meta('chat-42')).toStrictEqual(original)
      expect(await f.got('session::created')).toHaveLength(1)
    })

    it('74. ensure with an empty session_id is rejected', async () => {
      const f = h.sink()
      f.bind('session::created')
      await rejects(h.call('session::ensure', { session_id: '' }), 'session/invalid_request')
      expect(await f.got()).toHaveLength(0)
      expect((await h.call('session::list', {})).sessions).toStrictEqual([])
    })

    it('75. an ensured session has the same fresh shape as a created one', async () => {
      const ensured = await h.call('session::ensure', { session_id: 'chat-42' })
      const created = await h.call('session::create', {})
      expect(ensured.meta).toStrictEqual(freshMeta('chat-42'))
      expect(created.meta).toStrictEqual({ ...ensured.meta, session_id: 's_001' })
    })
  })

  describe('errors', () => {
    it('76. every mutation on an unknown session reports session/not_found', async () => {
      const g = 'ghost'
      await rejects(h.call('session::set-meta', { session_id: g, title: 'x' }), 'session/not_found')
      await rejects(h.call('session::set-status', { session_id: g, status: 'working' }), 'session/not_found')
      await rejects(h.call('session::append', { session_id: g, message: user('x') }), 'session/not_found')
      await rejects(
        h.call('session::append-many', { session_id: g, messages: [user('x')] }),
        'session/not_found',
      )
      await rejects(
        h.call('session::update-message', { session_id: g, entry_id: 'e_001', content: [] }),
        'session/not_found',
      )
      await rejects(h.call('session::messages', { session_id: g }), 'session/not_found')
      await rejects(h.call('session::fork', { session_id: g, entry_id: 'e_001' }), 'session/not_found')
      await rejects(
        h.call('session::set-active-leaf', { session_id: g, entry_id: 'e_001' }),
        'session/not_found',
      )
      // None of them created the session on the way.
      expect(await h.call('session::get', { session_id: g })).toBeNull()
    })

    it('77. reads return null for unknown ids', async () => {
      const s = await h.bare()
      expect(await h.call('session::get', { session_id: 'ghost' })).toBeNull()
      expect(await h.call('session::get-message', { session_id: s, entry_id: 'ghost' })).toBeNull()
      expect(await h.call('session::get-message', { session_id: 'ghost', entry_id: 'e_001' })).toBeNull()
    })

    it('78. a structurally invalid request is rejected before any logic runs', async () => {
      const f = h.sink()
      f.bind('session::created')
      await rejects(h.raw('session::create', { title: 12345 }), 'session/invalid_request')
      expect(await f.got()).toHaveLength(0)
      expect((await h.call('session::list', {})).sessions).toStrictEqual([])
    })

    it('79. unknown enum values are rejected', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::status-changed')
      await rejects(
        h.raw('session::set-status', { session_id: s, status: 'halted' }),
        'session/invalid_request',
      )
      await rejects(h.raw('session::list', { order: 'alphabetical' }), 'session/invalid_request')
      expect(await f.got()).toHaveLength(0)
      expect((await h.meta(s)).status).toBe('idle')
    })
  })
}
