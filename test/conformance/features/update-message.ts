import { beforeEach, describe, expect, it } from 'vitest'
import {
  customEntry,
  emptyAssistant,
  functionResult,
  rejects,
  T0,
  text,
  user,
  type Harness,
} from '../harness.js'

// update_message.feature (contract 2.11): bare session + empty assistant e_001.
export function updateMessageFeature(h: Harness): void {
  describe('update-message', () => {
    let s: string
    beforeEach(async () => {
      s = await h.bare()
      await h.call('session::append', { session_id: s, message: emptyAssistant() })
    })
    const update = (content: string, extra: Record<string, unknown> = {}) =>
      h.call('session::update-message', {
        session_id: s,
        entry_id: 'e_001',
        content: [text(content)],
        ...extra,
      })

    it('157. streaming growth increments the revision each update', async () => {
      const f = h.sink()
      f.bind('session::message-updated')
      expect(await update('Hello')).toStrictEqual({ updated: true, revision: 1 })
      expect(await update('Hello world')).toStrictEqual({ updated: true, revision: 2 })
      const got = await f.got('session::message-updated')
      expect(got.map((e) => [e.revision, e.message.content])).toStrictEqual([
        [1, [text('Hello')]],
        [2, [text('Hello world')]],
      ])
      expect(got[1]).toStrictEqual({
        session_id: s,
        entry_id: 'e_001',
        message: { ...emptyAssistant(), content: [text('Hello world')] },
        revision: 2,
        timestamp: T0,
      })
      expect(await h.entry(s, 'e_001')).toMatchObject({
        revision: 2,
        message: { content: [text('Hello world')] },
      })
    })

    it("158. an update never changes the entry's creation timestamp", async () => {
      h.clock.advance(5000)
      await update('later')
      expect(await h.entry(s, 'e_001')).toMatchObject({ timestamp: T0, parent_id: null, revision: 1 })
      // The meta moves with the update; the count does not.
      expect(await h.meta(s)).toMatchObject({ updated_at: T0 + 5000, message_count: 1 })
    })

    it('159. expected_revision mismatch writes nothing and fires nothing', async () => {
      const f = h.sink()
      f.bind('session::message-updated')
      expect(await update('winner', { expected_revision: 0 })).toStrictEqual({ updated: true, revision: 1 })
      h.clock.advance(9)
      expect(await update('loser', { expected_revision: 0 })).toStrictEqual({ updated: false, revision: 1 })
      expect(await f.got('session::message-updated')).toHaveLength(1)
      expect(await h.entry(s, 'e_001')).toMatchObject({ revision: 1, message: { content: [text('winner')] } })
      expect((await h.meta(s)).updated_at).toBe(T0)
    })

    it('160. details are replaced on function_result messages', async () => {
      await h.call('session::append', { session_id: s, message: functionResult('c1') })
      const res = await h.call('session::update-message', {
        session_id: s,
        entry_id: 'e_002',
        content: [text('[pruned]')],
        details: { compacted_at: 1000123 },
      })
      expect(res).toStrictEqual({ updated: true, revision: 1 })
      expect(await h.entry(s, 'e_002')).toStrictEqual({
        id: 'e_002',
        parent_id: 'e_001',
        timestamp: T0,
        revision: 1,
        kind: 'message',
        message: { ...functionResult('c1'), content: [text('[pruned]')], details: { compacted_at: 1000123 } },
      })
    })

    it('161. details on a user message are rejected', async () => {
      await h.say(s, 'hi')
      await rejects(
        h.call('session::update-message', {
          session_id: s,
          entry_id: 'e_002',
          content: [text('x')],
          details: { a: 1 },
        }),
        'session/details_not_supported',
      )
      expect(await h.entry(s, 'e_002')).toMatchObject({ revision: 0, message: user('hi') })
    })

    it('162. updating a custom entry is rejected', async () => {
      await h.call('session::append', { session_id: s, custom: customEntry('compaction') })
      await rejects(
        h.call('session::update-message', { session_id: s, entry_id: 'e_002', content: [] }),
        'session/invalid_entry_kind',
      )
    })

    it('163. unknown entry and unknown session are rejected', async () => {
      await rejects(
        h.call('session::update-message', { session_id: s, entry_id: 'ghost', content: [] }),
        'session/entry_not_found',
      )
      await rejects(
        h.call('session::update-message', { session_id: 's_404', entry_id: 'e_001', content: [] }),
        'session/not_found',
      )
    })
  })
}
