import { beforeEach, describe, expect, it } from 'vitest'
import { emptyAssistant, rejects, T0, text, user, type Harness } from '../harness.js'

const textOf = (item: { message?: { content: readonly unknown[] } }): unknown => item.message?.content

// fork.feature (contract 2.14): session "main" owned by u_1 with e_001 user "one",
// e_002 empty assistant, e_003 user "three".
export function forkFeature(h: Harness): void {
  describe('fork', () => {
    let s: string
    beforeEach(async () => {
      s = await h.bare({ title: 'main', metadata: { owner: 'u_1' } })
      await h.say(s, 'one')
      await h.call('session::append', { session_id: s, message: emptyAssistant() })
      await h.say(s, 'three')
    })

    it('92. fork copies the path with fresh ids and preserved structure', async () => {
      h.clock.advance(100)
      const res = await h.call('session::fork', { session_id: s, entry_id: 'e_002', title: 'alt take' })
      // No draft, no status_reason: toStrictEqual pins the exact key set.
      expect(res).toStrictEqual({
        session_id: 's_002',
        meta: {
          session_id: 's_002',
          title: 'alt take',
          description: '',
          status: 'idle',
          kind: 'user',
          metadata: { owner: 'u_1' },
          forked_from: 's_001',
          created_at: T0 + 100,
          updated_at: T0 + 100,
          message_count: 2,
        },
      })
      expect((await h.call('session::messages', { session_id: 's_002' })).messages).toStrictEqual([
        { entry_id: 'e_004', message: user('one') },
        { entry_id: 'e_005', message: emptyAssistant() },
      ])
      // Original entry timestamps are kept; parents are remapped.
      expect(await h.entry('s_002', 'e_004')).toStrictEqual({
        id: 'e_004',
        parent_id: null,
        timestamp: T0,
        revision: 0,
        kind: 'message',
        message: user('one'),
      })
      expect((await h.entry('s_002', 'e_005')).parent_id).toBe('e_004')
      // Sibling entries past the fork point are not copied.
      expect(await h.call('session::get-message', { session_id: 's_002', entry_id: 'e_003' })).toBeNull()
    })

    it("93. the fork's active leaf is the copy of the fork point", async () => {
      await h.call('session::fork', { session_id: s, entry_id: 'e_002' })
      expect(await h.say('s_002', 'continue')).toStrictEqual({
        entry_id: 'e_006',
        parent_id: 'e_005',
        timestamp: T0,
      })
    })

    it('94. fork without a title inherits the source title', async () => {
      expect((await h.call('session::fork', { session_id: s, entry_id: 'e_003' })).meta.title).toBe('main')
    })

    it('95. fork fires session::created carrying forked_from', async () => {
      const f = h.sink()
      f.bind('session::created')
      await h.call('session::fork', { session_id: s, entry_id: 'e_003' })
      expect(await f.got('session::created')).toStrictEqual([
        {
          session_id: 's_002',
          title: 'main',
          description: '',
          status: 'idle',
          forked_from: 's_001',
          created_at: T0,
        },
      ])
    })

    it('96. source and fork are fully independent after the fork', async () => {
      await h.call('session::fork', { session_id: s, entry_id: 'e_002' })
      await h.say(s, 'source only')
      await h.call('session::update-message', {
        session_id: 's_002',
        entry_id: 'e_004',
        content: [text('edited')],
      })
      const forked = (await h.call('session::messages', { session_id: 's_002' })).messages
      expect(forked.map((m) => m.entry_id)).toStrictEqual(['e_004', 'e_005'])
      expect(textOf(forked[0])).toStrictEqual([text('edited')])
      const original = await h.entry(s, 'e_001')
      expect(original).toMatchObject({ revision: 0, message: user('one') })
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001', 'e_002', 'e_003', 'e_006'])
    })

    it('97. deleting the source leaves the fork intact', async () => {
      await h.call('session::fork', { session_id: s, entry_id: 'e_003' })
      await h.call('session::delete', { session_id: s })
      expect((await h.meta('s_002')).forked_from).toBe('s_001')
      expect(await h.ids({ session_id: 's_002' })).toStrictEqual(['e_004', 'e_005', 'e_006'])
    })

    it('98. only the path to the fork point is copied', async () => {
      await h.call('session::set-active-leaf', { session_id: s, entry_id: 'e_001' })
      await h.say(s, 'branch-b')
      const res = await h.call('session::fork', { session_id: s, entry_id: 'e_004' })
      expect(res.meta.message_count).toBe(2)
      expect((await h.call('session::messages', { session_id: res.session_id })).messages).toStrictEqual([
        { entry_id: 'e_005', message: user('one') },
        { entry_id: 'e_006', message: user('branch-b') },
      ])
    })

    it('99. copied entries restart their revision at 0', async () => {
      await h.call('session::update-message', { session_id: s, entry_id: 'e_002', content: [text('rev1')] })
      await h.call('session::fork', { session_id: s, entry_id: 'e_002' })
      const copy = await h.entry('s_002', 'e_005')
      expect(copy).toMatchObject({ revision: 0, message: { role: 'assistant', content: [text('rev1')] } })
      expect((await h.entry(s, 'e_002')).revision).toBe(1)
    })

    it("100. fork rewrites the compaction anchor to the copied entry's id", async () => {
      await h.call('session::append', {
        session_id: s,
        custom: { custom_type: 'compaction', data: { tail_start_entry_id: 'e_002', summary: 'so far' } },
      })
      const res = await h.call('session::fork', { session_id: s, entry_id: 'e_004' })
      expect(res.meta.message_count).toBe(3)
      const items = (await h.call('session::messages', { session_id: res.session_id, include_custom: true }))
        .messages
      expect(items.map((m) => m.entry_id)).toStrictEqual(['e_005', 'e_006', 'e_007', 'e_008'])
      expect(items[3]).toStrictEqual({
        entry_id: 'e_008',
        custom: { custom_type: 'compaction', data: { tail_start_entry_id: 'e_006', summary: 'so far' } },
      })
    })

    it('101. an unknown compaction anchor is copied unchanged', async () => {
      await h.call('session::append', {
        session_id: s,
        custom: { custom_type: 'compaction', data: { tail_start_entry_id: 'e_999', summary: 'so far' } },
      })
      const res = await h.call('session::fork', { session_id: s, entry_id: 'e_004' })
      const items = (await h.call('session::messages', { session_id: res.session_id, include_custom: true }))
        .messages
      expect(items[3].custom).toStrictEqual({
        custom_type: 'compaction',
        data: { tail_start_entry_id: 'e_999', summary: 'so far' },
      })
    })

    it("102. a fork inherits the source session's kind", async () => {
      const e2e = await h.bare({ kind: 'e2e' })
      expect(e2e).toBe('s_002')
      await h.say(e2e, 'probe')
      const res = await h.call('session::fork', { session_id: e2e, entry_id: 'e_004' })
      expect(res.session_id).toBe('s_003')
      expect(res.meta).toMatchObject({ kind: 'e2e', forked_from: 's_002', message_count: 1 })
    })

    it('103. fork at an unknown entry or session is rejected', async () => {
      await rejects(h.call('session::fork', { session_id: s, entry_id: 'ghost' }), 'session/entry_not_found')
      await rejects(h.call('session::fork', { session_id: 's_404', entry_id: 'e_001' }), 'session/not_found')
      expect((await h.call('session::list', {})).sessions.map((m) => m.session_id)).toStrictEqual(['s_001'])
    })
  })
}
