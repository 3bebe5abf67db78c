import './act-environment.js'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { LOADING, useMessages, useSession } from '../src/index.js'
import { seedIndexedDb } from '../../../test/support/fixtures.js'
import { providerOf } from './wrapper.js'

afterEach(cleanup)

describe('over IndexedDB', () => {
  it('shows loading while a session is read from disk, then its transcript, then live changes', async () => {
    const { name, session_id, ids, reopen } = await seedIndexedDb('react-hooks', 6)

    // A fresh store has read nothing of the session (its head is read on first use, issue 28).
    const store = await reopen()
    const { result } = renderHook(
      () => ({ session: useSession(session_id), messages: useMessages({ session_id }) }),
      { wrapper: providerOf(store) },
    )
    expect(result.current.session).toBe(LOADING)
    expect(result.current.messages).toBe(LOADING)
    await waitFor(() => expect(result.current.session.data?.message_count).toBe(6))
    await waitFor(() => expect(result.current.messages.status).toBe('ready'))
    expect(result.current.messages.data?.map((i) => i.entry_id)).toEqual(ids)

    await act(() =>
      store.updateMessage({
        session_id,
        entry_id: ids[5],
        content: [{ type: 'text', text: 'from disk, then live' }],
      }),
    )
    expect(result.current.messages.data?.[5].message?.content).toEqual([
      { type: 'text', text: 'from disk, then live' },
    ])
    cleanup()
    await store.close()
    indexedDB.deleteDatabase(name)
  })
})
