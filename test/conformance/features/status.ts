import { beforeEach, describe, expect, it } from 'vitest'
import type { SessionStatus } from '@colloquy/core'
import { rejects, T0, type Harness, type Sink } from '../harness.js'

// status.feature (contract 2.7, newest rule: reasons kept on working/done/error).
export function statusFeature(h: Harness): void {
  describe('set-status', () => {
    let s: string
    let f: Sink
    const set = (status: SessionStatus, reason?: string) =>
      h.call('session::set-status', { session_id: s, status, ...(reason !== undefined && { reason }) })
    beforeEach(async () => {
      s = await h.bare()
      f = h.sink()
      f.bind('session::status-changed')
    })

    it('147. a status change fires status_changed with the previous status', async () => {
      h.clock.advance(3)
      expect(await set('working')).toStrictEqual({ status: 'working', previous_status: 'idle' })
      expect(await f.got('session::status-changed')).toStrictEqual([
        { session_id: s, status: 'working', previous_status: 'idle', timestamp: T0 + 3 },
      ])
      expect(await h.meta(s)).toMatchObject({ status: 'working', updated_at: T0 + 3 })
    })

    it('148. setting the same status again fires nothing', async () => {
      await set('working')
      h.clock.advance(3)
      expect(await set('working')).toStrictEqual({ status: 'working', previous_status: 'working' })
      expect(await f.got('session::status-changed')).toHaveLength(1)
      expect((await h.meta(s)).updated_at).toBe(T0)
    })

    it('149. a working-phase reason change updates and re-emits', async () => {
      await set('working', 'preparing context')
      expect(await set('working', 'waiting for claude')).toStrictEqual({
        status: 'working',
        previous_status: 'working',
      })
      expect((await h.meta(s)).status_reason).toBe('waiting for claude')
      const got = await f.got('session::status-changed')
      expect(got).toHaveLength(2)
      expect(got[1]).toStrictEqual({
        session_id: s,
        status: 'working',
        previous_status: 'working',
        status_reason: 'waiting for claude',
        timestamp: T0,
      })
    })

    it('150. same status with the same reason is still a no-op', async () => {
      await set('working', 'phase')
      expect(await set('working', 'phase')).toStrictEqual({ status: 'working', previous_status: 'working' })
      expect(await f.got('session::status-changed')).toHaveLength(1)
    })

    it('151. error stores the reason and the event carries it', async () => {
      await set('error', 'rate limited')
      expect((await f.got('session::status-changed'))[0].status_reason).toBe('rate limited')
      expect(await h.meta(s)).toMatchObject({ status: 'error', status_reason: 'rate limited' })
    })

    it('152. leaving error clears the stored reason', async () => {
      await set('error', 'boom')
      await set('working')
      expect(await h.meta(s)).not.toHaveProperty('status_reason')
      expect((await f.got('session::status-changed'))[1]).not.toHaveProperty('status_reason')
    })

    it('153. a full turn lifecycle emits one event per transition', async () => {
      await set('working')
      await set('done')
      expect(
        (await f.got('session::status-changed')).map((e) => [e.previous_status, e.status]),
      ).toStrictEqual([
        ['idle', 'working'],
        ['working', 'done'],
      ])
    })

    it('154. done retains a terminal reason', async () => {
      await set('done', 'stopped')
      expect((await f.got('session::status-changed'))[0]).toMatchObject({
        status: 'done',
        status_reason: 'stopped',
      })
      expect((await h.meta(s)).status_reason).toBe('stopped')
    })

    it('155. set_status on an unknown session is rejected', async () => {
      await rejects(
        h.call('session::set-status', { session_id: 's_404', status: 'working' }),
        'session/not_found',
      )
    })

    it('2.7 a reason sent with idle is dropped, so idle+reason on an idle session is a no-op', async () => {
      expect(await set('idle', 'ignored')).toStrictEqual({ status: 'idle', previous_status: 'idle' })
      await set('working', 'busy')
      await set('idle', 'ignored')
      expect(await h.meta(s)).not.toHaveProperty('status_reason')
      const got = await f.got('session::status-changed')
      expect(got).toHaveLength(2)
      expect(got[1]).toStrictEqual({
        session_id: s,
        status: 'idle',
        previous_status: 'working',
        timestamp: T0,
      })
    })
  })
}
