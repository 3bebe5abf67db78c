import { describe, expect, it } from 'vitest'
import type { ListRequest } from '@colloquy/core'
import { rejects, type Harness } from '../harness.js'

// list.feature (contract 2.4).
export function listFeature(h: Harness): void {
  const ids = async (request: ListRequest): Promise<string[]> =>
    (await h.call('session::list', request)).sessions.map((m) => m.session_id)

  describe('list', () => {
    it('104. default order is updated_desc and reflects activity', async () => {
      const s1 = await h.bare()
      h.clock.advance(10)
      await h.bare()
      h.clock.advance(10)
      await h.say(s1, 'bump')
      expect(await ids({})).toStrictEqual(['s_001', 's_002'])
      expect(await ids({ order: 'updated_desc' })).toStrictEqual(['s_001', 's_002'])
    })

    it('105. created_asc and created_desc are mirror orders', async () => {
      await h.bare()
      h.clock.advance(10)
      await h.bare()
      h.clock.advance(10)
      await h.bare()
      expect(await ids({ order: 'created_asc' })).toStrictEqual(['s_001', 's_002', 's_003'])
      expect(await ids({ order: 'created_desc' })).toStrictEqual(['s_003', 's_002', 's_001'])
    })

    it('106. status filters to exactly that status', async () => {
      await h.bare()
      const busy = await h.bare()
      await h.bare()
      await h.call('session::set-status', { session_id: busy, status: 'working' })
      expect(await ids({ status: 'working' })).toStrictEqual(['s_002'])
      expect(await ids({ status: 'done' })).toStrictEqual([])
    })

    it('107. metadata filters by subset equality', async () => {
      await h.bare({ metadata: { owner: 'u_1' } })
      await h.bare({ metadata: { owner: 'u_1', channel: 'tg' } })
      await h.bare({ metadata: { owner: 'u_2', channel: 'tg' } })
      await h.bare()
      const asc = { order: 'created_asc' } as const
      expect(await ids({ ...asc, metadata: { owner: 'u_1' } })).toStrictEqual(['s_001', 's_002'])
      expect(await ids({ ...asc, metadata: { owner: 'u_1', channel: 'tg' } })).toStrictEqual(['s_002'])
      // {} matches everything, including a session without metadata (contract 4.3).
      expect(await ids({ ...asc, metadata: {} })).toStrictEqual(['s_001', 's_002', 's_003', 's_004'])
    })

    it('108. cursor pagination is gapless under timestamp ties', async () => {
      for (let i = 0; i < 5; i++) await h.bare()
      const first = await h.call('session::list', { limit: 2, order: 'created_asc' })
      expect(first.sessions.map((m) => m.session_id)).toStrictEqual(['s_001', 's_002'])
      expect(typeof first.next_cursor).toBe('string')
      const second = await h.call('session::list', {
        limit: 2,
        order: 'created_asc',
        cursor: first.next_cursor,
      })
      expect(second.sessions.map((m) => m.session_id)).toStrictEqual(['s_003', 's_004'])
      const third = await h.call('session::list', {
        limit: 2,
        order: 'created_asc',
        cursor: second.next_cursor,
      })
      expect(third.sessions.map((m) => m.session_id)).toStrictEqual(['s_005'])
      expect(third).not.toHaveProperty('next_cursor')
    })

    it('109. a cursor is bound to the order it was issued for', async () => {
      for (let i = 0; i < 3; i++) await h.bare()
      const { next_cursor } = await h.call('session::list', { limit: 1, order: 'created_asc' })
      await rejects(
        h.call('session::list', { limit: 1, order: 'created_desc', cursor: next_cursor }),
        'session/invalid_cursor',
      )
    })

    it('110. limit zero clamps to one', async () => {
      await h.bare()
      await h.bare()
      const res = await h.call('session::list', { limit: 0 })
      expect(res.sessions).toHaveLength(1)
      expect(typeof res.next_cursor).toBe('string')
    })
  })
}
