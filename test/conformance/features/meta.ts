import { beforeEach, describe, expect, it } from 'vitest'
import { rejects, T0, type Harness } from '../harness.js'

// meta.feature (contract 2.5): session "untitled", description "", metadata {owner u_1, tag keep}.
export function metaFeature(h: Harness): void {
  describe('set-meta', () => {
    let s: string
    beforeEach(async () => {
      s = await h.bare({ title: 'untitled', description: '', metadata: { owner: 'u_1', tag: 'keep' } })
    })

    it('124. updating title and description fires meta_updated', async () => {
      const f = h.sink()
      f.bind('session::meta-updated')
      h.clock.advance(250)
      const { meta } = await h.call('session::set-meta', {
        session_id: s,
        title: 'Renamed',
        description: 'About weather',
      })
      expect(meta).toMatchObject({
        title: 'Renamed',
        description: 'About weather',
        updated_at: T0 + 250,
        created_at: T0,
      })
      expect(await h.meta(s)).toStrictEqual(meta)
      expect(await f.got('session::meta-updated')).toStrictEqual([
        {
          session_id: s,
          title: 'Renamed',
          description: 'About weather',
          metadata: { owner: 'u_1', tag: 'keep' },
          timestamp: T0 + 250,
        },
      ])
    })

    it('125. a supplied metadata object replaces the stored one wholesale', async () => {
      const { meta } = await h.call('session::set-meta', { session_id: s, metadata: { owner: 'u_2' } })
      expect(meta.metadata).toStrictEqual({ owner: 'u_2' })
      expect((await h.meta(s)).metadata).toStrictEqual({ owner: 'u_2' })
    })

    it('126. omitted fields keep their current values', async () => {
      const { meta } = await h.call('session::set-meta', { session_id: s, title: 'Only title' })
      expect(meta).toMatchObject({
        title: 'Only title',
        description: '',
        metadata: { owner: 'u_1', tag: 'keep' },
      })
    })

    it('127. a set_meta with no fields is a silent no-op', async () => {
      const f = h.sink()
      f.bind('session::meta-updated')
      const before = await h.meta(s)
      h.clock.advance(250)
      expect(await h.call('session::set-meta', { session_id: s })).toStrictEqual({ meta: before })
      expect(await h.meta(s)).toStrictEqual(before)
      expect(await f.got()).toHaveLength(0)
    })

    it('128. set_meta never touches status or messages', async () => {
      await h.call('session::set-status', { session_id: s, status: 'working', reason: 'thinking' })
      await h.say(s, 'hello')
      const { meta } = await h.call('session::set-meta', { session_id: s, title: 'T', metadata: {} })
      expect(meta).toMatchObject({
        status: 'working',
        status_reason: 'thinking',
        message_count: 1,
        kind: 'user',
        metadata: {},
      })
      expect(await h.ids({ session_id: s })).toStrictEqual(['e_001'])
    })

    it('129. metadata filters see the post-update metadata', async () => {
      const f = h.sink()
      f.bind('session::meta-updated', { metadata: { owner: 'u_2' } })
      await h.call('session::set-meta', { session_id: s, metadata: { owner: 'u_2' } })
      const got = await f.got('session::meta-updated')
      expect(got).toHaveLength(1)
      expect(got[0].metadata).toStrictEqual({ owner: 'u_2' })
    })

    it('130. set_meta on an unknown session is rejected', async () => {
      await rejects(h.call('session::set-meta', { session_id: 's_404', title: 'x' }), 'session/not_found')
    })

    it('2.5 re-sending the same title still writes, bumps updated_at and emits (no equality check)', async () => {
      const f = h.sink()
      f.bind('session::meta-updated')
      h.clock.advance(5)
      await h.call('session::set-meta', { session_id: s, title: 'untitled' })
      expect((await h.meta(s)).updated_at).toBe(T0 + 5)
      expect(await f.got('session::meta-updated')).toHaveLength(1)
    })
  })
}
