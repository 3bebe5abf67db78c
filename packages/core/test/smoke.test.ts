import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, SessionError } from '../src/index.js'

describe('smoke', () => {
  it('creates, appends, streams and reads back', async () => {
    let n = 0
    let m = 0
    const store = await createStore({ storage: memoryStorage(), now: () => 1000000, newId: (k) => (k === 'session' ? `s_${String(++n).padStart(3, '0')}` : `e_${String(++m).padStart(3, '0')}`) })
    const { session_id } = await store.create({ title: 'Weather', metadata: { owner: 'u_1' } })
    expect(session_id).toBe('s_001')
    const seen: unknown[] = []
    store.messages$({ session_id }).subscribe((v) => seen.push(v))
    const { entry_id } = await store.append({ session_id, message: { role: 'assistant', content: [], model: 'm', provider: 'p', stop_reason: 'end', timestamp: 1 } })
    await store.updateMessage({ session_id, entry_id, content: [{ type: 'text', text: 'Sun' }] })
    const res = await store.messages({ session_id })
    expect(res.messages).toHaveLength(1)
    expect(seen.at(-1)).toEqual(res.messages)
    await expect(store.append({ session_id: 'nope', message: { role: 'user', content: [], timestamp: 0 } })).rejects.toBeInstanceOf(SessionError)
  })
})
