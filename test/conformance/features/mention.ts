import { describe, expect, it } from 'vitest'
import { T0, type Harness } from '../harness.js'

// D14: the mention provider of contract 7 item 14 (`session::mention::search` / `::get`).
export function mentionFeature(h: Harness): void {
  describe('mention', () => {
    const search = async (req: Record<string, unknown>) =>
      (await h.call('session::mention::search', req)).items
    const labels = async (req: Record<string, unknown>) => (await search(req)).map((i) => i.label)

    it('D14. search ranks by tier, then top-level before sub-agent, then newest, then id', async () => {
      const a = await h.bare({ title: 'Deploy pipeline' }) // tier 0 for "deploy" (title prefix)
      h.clock.advance(10)
      const b = await h.bare({ title: 'Fix the deploy script' }) // tier 1 (term prefixes a word)
      h.clock.advance(10)
      const c = await h.bare({ title: 'Redeployment' }) // tier 2 (title contains)
      h.clock.advance(10)
      const d = await h.bare({ title: 'Notes', description: 'how we deploy' }) // tier 3 (description)
      h.clock.advance(10)
      await h.bare({ title: 'Unrelated' })
      h.clock.advance(10)
      const child = await h.bare({ title: 'Deploy worker', metadata: { parent_session_id: a } }) // tier 0, sub-agent
      h.clock.advance(10)
      const newer = await h.bare({ title: 'deploy again' }) // tier 0, newest top-level
      await h.bare({ title: 'Deploy e2e run', kind: 'e2e' }) // never offered
      expect((await search({ query: '  DEPLOY ' })).map((i) => i.id)).toStrictEqual([
        newer,
        a,
        child,
        b,
        c,
        d,
      ])
      // The asking session is left out.
      expect(
        (await search({ query: 'deploy', context: { session_id: newer } })).map((i) => i.id),
      ).toStrictEqual([a, child, b, c, d])
    })

    it('D14. an empty query offers everything at tier 0, newest first, limited (default 8, clamped 1..50)', async () => {
      for (let i = 0; i < 10; i++) {
        await h.bare({ title: `chat ${i}` })
        h.clock.advance(1)
      }
      expect(await labels({})).toStrictEqual([
        'chat 9',
        'chat 8',
        'chat 7',
        'chat 6',
        'chat 5',
        'chat 4',
        'chat 3',
        'chat 2',
      ])
      expect(await labels({ query: '', limit: 0 })).toStrictEqual(['chat 9'])
      expect(await labels({ limit: 3 })).toHaveLength(3)
      expect(await labels({ limit: 500 })).toHaveLength(10)
    })

    it('D14. ties on updated_at break by session_id ascending', async () => {
      await h.bare({ title: 'same' })
      await h.bare({ title: 'same' })
      expect((await search({ query: 'same' })).map((i) => i.id)).toStrictEqual(['s_001', 's_002'])
    })

    it('D14. an id matches exactly (tier 0) or by a prefix of at least 4 bytes (tier 1)', async () => {
      await h.bare({ title: 'alpha' })
      await h.bare({ title: 'beta' })
      expect((await search({ query: 's_00' })).map((i) => i.id)).toStrictEqual(['s_001', 's_002'])
      expect((await search({ query: 's_0' })).map((i) => i.id)).toStrictEqual([])
      expect((await search({ query: 'S_002' })).map((i) => i.id)).toStrictEqual(['s_002'])
    })

    it('D14. items carry the label, sub-agent hint, status description and a colour', async () => {
      const s = await h.bare({ title: '   ' })
      await h.say(s, 'one')
      await h.call('session::set-status', { session_id: s, status: 'working' })
      const parent = s
      const child = await h.bare({ title: ' Child task ', metadata: { parent_session_id: parent } })
      await h.say(child, 'a')
      await h.say(child, 'b')
      const items = await search({})
      const bySid = new Map(items.map((i) => [i.id, i]))
      expect(bySid.get(parent)).toStrictEqual({
        id: parent,
        label: 'Untitled session',
        description: 'Working · 1 message',
        color: expect.any(String),
      })
      expect(bySid.get(child)).toStrictEqual({
        id: child,
        label: 'Child task',
        hint: 'sub-agent',
        description: 'Idle · 2 messages',
        color: expect.any(String),
      })
      expect(bySid.get(parent)!.color).not.toBe(bySid.get(child)!.color)
    })

    it('D14. get returns a view of the session without its draft, or null', async () => {
      const s = await h.bare({
        title: 'Report',
        kind: 'automation',
        metadata: { agent_profile: 'researcher', parent_session_id: 's_900' },
      })
      await h.say(s, 'go')
      h.clock.advance(1)
      await h.call('session::set-status', { session_id: s, status: 'error', reason: 'quota' })
      await h.call('session::set-draft', { session_id: s, draft: 'private' })
      const view = await h.call('session::mention::get', { id: s })
      const meta = await h.meta(s)
      const { draft: _d, ...data } = meta
      const updated = new Date(T0 + 1).toISOString()
      expect(view).toMatchObject({
        id: s,
        label: 'Report',
        hint: 'sub-agent',
        description: 'Error · 1 message',
        icon: 'session',
        fields: [
          { label: 'Status', value: 'Error', tone: expect.any(String) },
          { label: 'Messages', value: '1' },
          { label: 'Updated', value: updated },
          { label: 'Reason', value: 'quota' },
          { label: 'Agent', value: 'researcher' },
          { label: 'Parent', value: 's_900' },
          { label: 'Kind', value: 'automation' },
        ],
        open: { session: s },
        updated_at: updated,
      })
      expect(view!.data).toStrictEqual(data)
      expect(view!.summary).not.toContain('\n')
      expect(updated).toBe('1970-01-01T00:16:40.001Z')
      expect(await h.call('session::mention::get', { id: 's_404' })).toBeNull()
      // A plain user session shows no Reason/Agent/Parent/Kind rows.
      const plain = await h.bare({ title: 'plain' })
      expect(
        (await h.call('session::mention::get', { id: plain }))!.fields.map((f) => f.label),
      ).toStrictEqual(['Status', 'Messages', 'Updated'])
    })

    it('D14. mention functions are reads: no event, no updated_at change', async () => {
      const f = h.sink()
      for (const t of ['session::created', 'session::meta-updated'] as const) f.bind(t)
      const s = await h.bare({ title: 'x' })
      h.clock.advance(5)
      await search({ query: 'x' })
      await h.call('session::mention::get', { id: s })
      expect(await f.got('session::meta-updated')).toStrictEqual([])
      expect((await h.meta(s)).updated_at).toBe(T0)
    })
  })
}
