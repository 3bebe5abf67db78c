import { beforeEach, describe, expect, it } from 'vitest'
import { rejects, T0, type Harness } from '../harness.js'

// draft.feature (contract 2.6): session created with title "untitled", metadata owner u_1.
export function draftFeature(h: Harness): void {
  describe('draft', () => {
    let s: string
    beforeEach(async () => {
      s = await h.bare({ title: 'untitled', metadata: { owner: 'u_1' } })
    })

    it('55. a stored draft reads back on session::get', async () => {
      expect(
        await h.call('session::set-draft', { session_id: s, draft: 'half-typed thought' }),
      ).toStrictEqual({ draft: 'half-typed thought', attachments: [] })
      expect((await h.meta(s)).draft).toBe('half-typed thought')
    })

    it('56. saving a draft fires no event and keeps updated_at', async () => {
      const f = h.sink()
      f.bind('session::meta-updated')
      h.clock.advance(250)
      await h.call('session::set-draft', { session_id: s, draft: 'typing…' })
      expect(await f.got()).toStrictEqual([])
      expect((await h.meta(s)).updated_at).toBe(T0)
    })

    it('57. empty or whitespace-only text clears the draft', async () => {
      await h.call('session::set-draft', { session_id: s, draft: 'something' })
      expect(await h.call('session::set-draft', { session_id: s, draft: '   ' })).toStrictEqual({
        draft: null,
        attachments: [],
      })
      expect('draft' in (await h.meta(s))).toBe(false)
    })

    it('58. set-meta leaves the stored draft alone', async () => {
      await h.call('session::set-draft', { session_id: s, draft: 'keep me' })
      await h.call('session::set-meta', {
        session_id: s,
        title: 'renamed',
        metadata: { owner: 'u_1', tag: 'x' },
      })
      const meta = await h.meta(s)
      expect(meta.draft).toBe('keep me')
      expect(meta.title).toBe('renamed')
    })

    it('59. set-draft on an unknown session is rejected', async () => {
      await rejects(h.call('session::set-draft', { session_id: 's_404', draft: 'x' }), 'session/not_found')
    })

    it('2.6 text is stored as given (not trimmed) and an omitted draft clears it', async () => {
      expect((await h.call('session::set-draft', { session_id: s, draft: '  padded  ' })).draft).toBe(
        '  padded  ',
      )
      expect((await h.meta(s)).draft).toBe('  padded  ')
      expect(await h.call('session::set-draft', { session_id: s })).toStrictEqual({
        draft: null,
        attachments: [],
      })
      expect('draft' in (await h.meta(s))).toBe(false)
    })

    it('2.4 list returns full metas with the draft and keeps its order', async () => {
      h.clock.advance(10)
      const other = await h.bare({ title: 'newer' })
      h.clock.advance(10)
      await h.call('session::set-draft', { session_id: s, draft: 'parked' })
      const { sessions } = await h.call('session::list', {})
      expect(sessions.map((m) => m.session_id)).toStrictEqual([other, s])
      expect(sessions[1].draft).toBe('parked')
    })
  })
}
