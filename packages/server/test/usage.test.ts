import { createStore, memoryStorage } from '@colloquy/core'
import { describe, expect, it } from 'vitest'
import { Usage } from '../src/usage.js'

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})
const ownerOf = (m: { owner?: unknown } | undefined): string => (typeof m?.owner === 'string' ? m.owner : '')

describe('Usage: what each principal stores', () => {
  it("counts sessions and bytes from commits; an update replaces its entry's size; a delete frees it; a reopen counts the same", async () => {
    const inner = memoryStorage()
    const usage = new Usage(inner, { maxSessions: 0, maxStoredBytes: 0 }, ownerOf)
    const store = await createStore({ storage: usage.storage, multiTab: false })
    await store.ensure({ session_id: 'a1', metadata: { owner: 'alice' } })
    const { entry_id } = await store.append({ session_id: 'a1', message: user('x'.repeat(1000)) })
    await store.ensure({ session_id: 'b1', metadata: { owner: 'bob' } })
    const alice = usage.of('alice')
    expect(alice.sessions).toBe(1)
    expect(alice.bytes).toBeGreaterThan(1000)
    expect(alice.bytes).toBeLessThan(2000)
    expect(usage.of('bob').sessions).toBe(1)

    await store.updateMessage({
      session_id: 'a1',
      entry_id,
      content: [{ type: 'text', text: 'y'.repeat(1000) }],
    })
    expect(Math.abs(usage.of('alice').bytes - alice.bytes)).toBeLessThan(50)

    const reopened = new Usage(inner, { maxSessions: 0, maxStoredBytes: 0 }, ownerOf)
    const again = await createStore({ storage: reopened.storage, multiTab: false })
    expect(reopened.of('alice')).toStrictEqual(usage.of('alice'))
    await again.delete({ session_id: 'a1' })
    expect(reopened.of('alice')).toStrictEqual({ sessions: 0, bytes: 0 })
    expect(reopened.of('bob').sessions).toBe(1)
  })

  it("counts a meta's bytes exactly as the JSON a reopen measures, through appends that change its numbers and edits that change the rest", async () => {
    const inner = memoryStorage()
    const usage = new Usage(inner, { maxSessions: 0, maxStoredBytes: 0 }, ownerOf)
    const store = await createStore({
      storage: usage.storage,
      multiTab: false,
      now: (() => {
        let t = 9_990
        return () => ++t
      })(),
    })
    await store.ensure({ session_id: 'a1', metadata: { owner: 'alice' } })
    const recount = async () => {
      const fresh = new Usage(inner, { maxSessions: 0, maxStoredBytes: 0 }, ownerOf)
      await (await createStore({ storage: fresh.storage, multiTab: false })).close()
      return fresh.of('alice')
    }
    // message_count crosses 9 → 10 and 99 → 100; the clock passes 9,999 → 10,000.
    for (let i = 0; i < 101; i++) {
      await store.append({ session_id: 'a1', message: user(`m${i}`) })
      if (i === 8 || i === 10 || i === 99 || i === 100)
        expect(usage.of('alice')).toStrictEqual(await recount())
    }
    await store.setMeta({
      session_id: 'a1',
      title: 'a longer title than before',
      metadata: { owner: 'alice', tag: 'x' },
    })
    expect(usage.of('alice')).toStrictEqual(await recount())
    await store.setStatus({ session_id: 'a1', status: 'error', reason: 'gone' })
    expect(usage.of('alice')).toStrictEqual(await recount())
    await store.setMeta({ session_id: 'a1', title: '' })
    expect(usage.of('alice')).toStrictEqual(await recount())
  })

  it('accounts a commit of many large metas in slices, with the same figures as a recount, and other work runs meanwhile', async () => {
    const inner = memoryStorage()
    const usage = new Usage(inner, { maxSessions: 0, maxStoredBytes: 0 }, ownerOf)
    const store = await createStore({ storage: usage.storage, multiTab: false })
    const tags = Array.from({ length: 500 }, (_, i) => `tag-${i}`)
    const meta = (i: number, title: string) => ({
      session_id: `s${i}`,
      title,
      description: '',
      status: 'idle' as const,
      kind: 'user' as const,
      created_at: 1,
      updated_at: 1,
      message_count: 0,
      metadata: { owner: 'alice', tags },
    })
    await store.applyReplica(
      Array.from({ length: 200 }, (_, i) => ({ type: 'meta' as const, create: true, meta: meta(i, 'a') })),
      { policy: 'push' },
    )
    // Renames change a string: each meta (5 KB of JSON) is measured whole.
    let ticks = 0
    let ticking = true
    const tick = (): void => {
      ticks++
      if (ticking) setImmediate(tick)
    }
    setImmediate(tick)
    const before = ticks
    await store.applyReplica(
      Array.from({ length: 200 }, (_, i) => ({ type: 'meta' as const, meta: meta(i, `renamed ${i}`) })),
      { policy: 'push' },
    )
    ticking = false
    // A megabyte of metas: measured over many turns, not one.
    expect(ticks - before).toBeGreaterThan(10)
    const fresh = new Usage(inner, { maxSessions: 0, maxStoredBytes: 0 }, ownerOf)
    await (await createStore({ storage: fresh.storage, multiTab: false })).close()
    expect(usage.of('alice')).toStrictEqual(fresh.of('alice'))
    expect(usage.of('alice').sessions).toBe(200)
    await store.close()
  })

  it('admits against the quotas, counting what concurrent writes reserved until they release it', async () => {
    const usage = new Usage(memoryStorage(), { maxSessions: 2, maxStoredBytes: 1000 }, ownerOf)
    await createStore({ storage: usage.storage, multiTab: false })
    const r1 = await usage.admit('alice', 600, 1)
    await expect(usage.admit('alice', 600)).rejects.toThrow(/quota exceeded: at most 1000 stored bytes/)
    const r2 = await usage.admit('alice', 100, 1)
    await expect(usage.admit('alice', 0, 1)).rejects.toThrow(/quota exceeded: at most 2 sessions/)
    await expect(usage.admit('bob', 900, 2)).resolves.toBeTypeOf('function')
    r1()
    r1()
    await expect(usage.admit('alice', 800, 1)).resolves.toBeTypeOf('function')
    r2()
    // Writes that add nothing (deletes, reads) are never refused.
    await expect(usage.admit('alice', 0, 0)).resolves.toBeTypeOf('function')
  })
})
