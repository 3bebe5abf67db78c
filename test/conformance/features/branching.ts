import { beforeEach, describe, expect, it } from 'vitest'
import { rejects, T0, text, type Harness } from '../harness.js'

// branching.feature (contract 2.15, 1.9): background e_001..e_003 "one", "two", "three".
export function branchingFeature(h: Harness): void {
  describe('branching', () => {
    let s: string
    beforeEach(async () => {
      s = await h.bare()
      for (const t of ['one', 'two', 'three']) await h.say(s, t)
    })

    it('38. switching to a non-leaf truncates the active path', async () => {
      expect(await h.call('session::set-active-leaf', { session_id: s, entry_id: 'e_001' })).toStrictEqual({
        active_leaf: 'e_001',
      })
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001'])
    })

    it('39. append after a switch creates a sibling branch', async () => {
      await h.call('session::set-active-leaf', { session_id: s, entry_id: 'e_001' })
      expect(await h.say(s, 'four')).toStrictEqual({ entry_id: 'e_004', parent_id: 'e_001', timestamp: T0 })
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001', 'e_004'])
    })

    it('40. the abandoned branch stays fully readable', async () => {
      await h.call('session::set-active-leaf', { session_id: s, entry_id: 'e_001' })
      await h.say(s, 'four')
      const abandoned = await h.entry(s, 'e_003')
      expect(abandoned.kind === 'message' && abandoned.message.content).toStrictEqual([text('three')])
      expect(await h.ids({ session_id: s, from_entry_id: 'e_003' })).toStrictEqual([
        'e_001',
        'e_002',
        'e_003',
      ])
    })

    it('41. switching to an unknown entry is rejected', async () => {
      await rejects(
        h.call('session::set-active-leaf', { session_id: s, entry_id: 'ghost' }),
        'session/entry_not_found',
      )
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001', 'e_002', 'e_003'])
    })

    it('42. a branch switch emits no events', async () => {
      const f = h.sink()
      f.bind('session::message-added')
      f.bind('session::meta-updated')
      await h.call('session::set-active-leaf', { session_id: s, entry_id: 'e_002' })
      expect(await f.got()).toHaveLength(0)
    })
  })
}
