import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage } from '../src/index.js'

describe('updateMessage records how an assistant message ended', () => {
  it('sets stop_reason and error_message on an assistant message, keeps them when omitted, and refuses them elsewhere', async () => {
    const store = await createStore({ storage: memoryStorage() })
    const { session_id } = await store.create({})
    const { entry_id: user } = await store.append({
      session_id,
      message: { role: 'user', content: [], timestamp: 1 },
    })
    const { entry_id } = await store.append({
      session_id,
      parent_id: user,
      message: {
        role: 'assistant',
        content: [],
        model: 'm',
        provider: 'p',
        stop_reason: 'end',
        timestamp: 2,
      },
    })
    const text = [{ type: 'text' as const, text: 'Su' }]
    await store.updateMessage({
      session_id,
      entry_id,
      content: text,
      stop_reason: 'error',
      error_message: 'HTTP 500',
    })
    const read = async () => (await store.getMessage({ session_id, entry_id }))?.entry
    const first = await read()
    expect(first?.kind === 'message' && first.message).toMatchObject({
      stop_reason: 'error',
      error_message: 'HTTP 500',
      content: text,
    })
    // A later content update leaves the ending alone.
    await store.updateMessage({ session_id, entry_id, content: [{ type: 'text', text: 'Sun' }] })
    const second = await read()
    expect(second?.kind === 'message' && second.message).toMatchObject({
      stop_reason: 'error',
      error_message: 'HTTP 500',
    })
    await expect(
      store.updateMessage({ session_id, entry_id: user, content: [], stop_reason: 'aborted' }),
    ).rejects.toMatchObject({ code: 'session/invalid_entry_kind' })
    await expect(
      store.updateMessage({ session_id, entry_id, content: [], stop_reason: 'nope' as 'end' }),
    ).rejects.toMatchObject({ code: 'session/invalid_request' })
    const after = await read()
    expect(after?.kind === 'message' && after.message.content).toEqual([{ type: 'text', text: 'Sun' }])
  })
})
