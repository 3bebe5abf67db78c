import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, SessionError } from '../src/index.js'

describe('smoke', () => {
  it('creates, appends, streams and reads back', async () => {
    let n = 0
    let m = 0
    const store = await createStore({
      storage: memoryStorage(),
      now: () => 1000000,
      newId: (k) =>
        k === 'session' ? `s_${String(++n).padStart(3, '0')}` : `e_${String(++m).padStart(3, '0')}`,
    })
    const { session_id } = await store.create({ title: 'Weather', metadata: { owner: 'u_1' } })
    expect(session_id).toBe('s_001')
    const seen: unknown[] = []
    store.messages$({ session_id }).subscribe((v) => seen.push(v))
    const { entry_id } = await store.append({
      session_id,
      message: {
        role: 'assistant',
        content: [],
        model: 'm',
        provider: 'p',
        stop_reason: 'end',
        timestamp: 1,
      },
    })
    await store.updateMessage({ session_id, entry_id, content: [{ type: 'text', text: 'Sun' }] })
    const res = await store.messages({ session_id })
    expect(res.messages).toHaveLength(1)
    expect(seen.at(-1)).toEqual(res.messages)
    await expect(
      store.append({ session_id: 'nope', message: { role: 'user', content: [], timestamp: 0 } }),
    ).rejects.toBeInstanceOf(SessionError)
  })
})

describe('default ids', () => {
  it('are the prefix and 21 URL-safe characters, all distinct, across refills of the random pool', async () => {
    const store = await createStore({ storage: memoryStorage() })
    const { session_id } = await store.create({})
    expect(session_id).toMatch(/^s_[A-Za-z0-9_-]{21}$/)
    // 1,024 pooled bytes make 48 ids: 150 appends draw the pool four times.
    const ids = new Set<string>()
    for (let i = 0; i < 150; i++) {
      const { entry_id } = await store.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: `m${i}` }], timestamp: i },
      })
      expect(entry_id).toMatch(/^e_[A-Za-z0-9_-]{21}$/)
      ids.add(entry_id)
    }
    expect(ids.size).toBe(150)
    // Not all from one alphabet corner: the bytes are random, not a stuck pool.
    expect(new Set([...ids].map((id) => id[2])).size).toBeGreaterThan(20)
    await store.close()
  })
})
