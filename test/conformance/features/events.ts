import { describe, expect, it } from 'vitest'
import {
  customEntry,
  customMessage,
  emptyAssistant,
  finalAssistant,
  T0,
  text,
  user,
  type Harness,
} from '../harness.js'

// event_filtering.feature and streaming.feature (contract 4.1, 4.2, 4.3).
export function eventsFeature(h: Harness): void {
  describe('event filtering', () => {
    it('80. session_id filters message events to one session', async () => {
      const [s1, s2] = [await h.bare(), await h.bare()]
      const f = h.sink()
      f.bind('session::message-added', { session_id: s1 })
      await h.say(s1, 'mine')
      await h.say(s2, 'theirs')
      expect((await f.got('session::message-added')).map((e) => e.session_id)).toStrictEqual(['s_001'])
    })

    it('81. roles filters to matching roles and never matches custom entries', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added', { roles: ['assistant'] })
      await h.say(s, 'question')
      await h.call('session::append', { session_id: s, message: emptyAssistant() })
      await h.call('session::append', { session_id: s, custom: customEntry('compaction') })
      const got = await f.got('session::message-added')
      expect(got.map((e) => [e.entry_id, e.message?.role])).toStrictEqual([['e_002', 'assistant']])
    })

    it('82. roles custom matches custom messages but not custom entries', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added', { roles: ['custom'] })
      await h.call('session::append', { session_id: s, message: customMessage('notice', 'heads up') })
      await h.call('session::append', { session_id: s, custom: customEntry('notice') })
      const got = await f.got('session::message-added')
      expect(got).toHaveLength(1)
      expect(got[0].message).toMatchObject({ role: 'custom', custom_type: 'notice' })
      expect(got[0]).not.toHaveProperty('custom')
    })

    it("83. metadata filters message events by the session's metadata", async () => {
      const s1 = await h.bare({ metadata: { owner: 'u_1' } })
      const s2 = await h.bare({ metadata: { owner: 'u_2' } })
      const f = h.sink()
      f.bind('session::message-added', { metadata: { owner: 'u_1' } })
      await h.say(s1, 'one')
      await h.say(s2, 'two')
      expect((await f.got('session::message-added')).map((e) => e.session_id)).toStrictEqual(['s_001'])
    })

    it('84. combined session_id and roles must both match', async () => {
      const [s1, s2] = [await h.bare(), await h.bare()]
      const f = h.sink()
      f.bind('session::message-added', { session_id: s1, roles: ['assistant'] })
      await h.call('session::append', { session_id: s2, message: emptyAssistant() })
      await h.say(s1, 'user turn')
      expect(await f.got()).toHaveLength(0)
      await h.call('session::append', { session_id: s1, message: emptyAssistant() })
      expect((await f.got('session::message-added')).map((e) => [e.session_id, e.entry_id])).toStrictEqual([
        ['s_001', 'e_003'],
      ])
    })

    it('85. every matching binding receives its own delivery', async () => {
      const s = await h.bare()
      const f = h.sink()
      f.bind('session::message-added', { session_id: s })
      f.bind('session::message-added', { roles: ['user'] })
      await h.say(s, 'twice')
      expect(await f.got('session::message-added')).toHaveLength(2)
    })

    it('86. an unbound subscriber stops receiving', async () => {
      const s = await h.bare()
      const f = h.sink()
      const unbind = f.bind('session::message-added')
      await h.say(s, 'one')
      unbind()
      await h.say(s, 'two')
      expect((await f.got('session::message-added')).map((e) => e.entry_id)).toStrictEqual(['e_001'])
    })

    it('87. a config with an unknown field is rejected at registration', async () => {
      const error = await h.bindError('session::message-added', { sesion_id: 's_001' })
      expect(error?.message).toContain('unknown field')
    })

    it('88. roles on status_changed is rejected', async () => {
      const error = await h.bindError('session::status-changed', { roles: ['user'] })
      expect(error?.message).toContain('unknown field')
    })

    it('89. session_id on created is rejected', async () => {
      const error = await h.bindError('session::created', { session_id: 's_001' })
      expect(error?.message).toContain('unknown field')
    })

    it('90. an invalid role value is rejected', async () => {
      const error = await h.bindError('session::message-updated', { roles: ['robot'] })
      expect(error?.message).toContain('invalid session::message-updated config')
    })

    it('91. an empty config receives everything', async () => {
      const f = h.sink()
      f.bind('session::created', {})
      // A null config equals {} (contract 4.2).
      const g = h.sink()
      g.bind('session::created', null)
      await h.bare()
      await h.bare({ metadata: { owner: 'u_1' } })
      expect((await f.got('session::created')).map((e) => e.session_id)).toStrictEqual(['s_001', 's_002'])
      expect(await g.got('session::created')).toHaveLength(2)
    })
  })

  describe('streaming', () => {
    it('156. a full streamed turn delivers every event a chat UI renders from', async () => {
      const ui = h.sink()
      ui.bind('session::created')
      ui.bind('session::message-added')
      ui.bind('session::message-updated', { roles: ['assistant'] })
      ui.bind('session::status-changed')
      const s = await h.bare({ title: 'Weather' })
      await h.say(s, 'Weather in Paris?')
      await h.call('session::set-status', { session_id: s, status: 'working' })
      await h.call('session::append', { session_id: s, message: emptyAssistant() })
      for (const t of ['It', 'It looks', 'It looks sunny.']) {
        await h.call('session::update-message', { session_id: s, entry_id: 'e_002', content: [text(t)] })
      }
      await h.call('session::set-status', { session_id: s, status: 'done' })

      const got = await ui.got()
      expect(got.map((d) => d.type)).toStrictEqual([
        'session::created',
        'session::message-added',
        'session::status-changed',
        'session::message-added',
        'session::message-updated',
        'session::message-updated',
        'session::message-updated',
        'session::status-changed',
      ])
      expect(got[0].payload).toMatchObject({ session_id: s, title: 'Weather' })
      expect(got[1].payload).toMatchObject({ entry_id: 'e_001', message: user('Weather in Paris?') })
      expect(got[2].payload).toStrictEqual({
        session_id: s,
        status: 'working',
        previous_status: 'idle',
        timestamp: T0,
      })
      expect(got[3].payload).toMatchObject({
        entry_id: 'e_002',
        parent_id: 'e_001',
        message: emptyAssistant(),
      })
      expect(got.slice(4, 7).map((d) => (d.payload as { revision: number }).revision)).toStrictEqual([
        1, 2, 3,
      ])
      expect(got[6].payload).toStrictEqual({
        session_id: s,
        entry_id: 'e_002',
        message: finalAssistant('It looks sunny.'),
        revision: 3,
        timestamp: T0,
      })
      expect(got[7].payload).toStrictEqual({
        session_id: s,
        status: 'done',
        previous_status: 'working',
        timestamp: T0,
      })

      const { messages } = await h.call('session::messages', { session_id: s })
      expect(messages).toStrictEqual([
        { entry_id: 'e_001', message: user('Weather in Paris?') },
        { entry_id: 'e_002', message: finalAssistant('It looks sunny.') },
      ])
      expect(await h.meta(s)).toMatchObject({ status: 'done', message_count: 2 })
    })
  })
}
