import { describe, expect, it } from 'vitest'
import { LOADING, useMessages, useSession } from '../src/index.js'
import { seedIndexedDb } from '../../../test/support/fixtures.js'
import { withSetup } from './with-setup.js'

describe('over IndexedDB', () => {
  it('shows loading while a session is read from disk, then its transcript, then live changes', async () => {
    const { name, session_id, ids, reopen } = await seedIndexedDb('vue-composables', 6)

    const store = await reopen()
    const { result, wrapper } = withSetup(
      () => ({ session: useSession(session_id), messages: useMessages({ session_id }) }),
      store,
    )
    // A fresh store has read nothing of the session (its head is read on first use, issue 28).
    expect(result.session.value).toBe(LOADING)
    expect(result.messages.value).toBe(LOADING)
    await expect.poll(() => result.session.value.data?.message_count).toBe(6)
    await expect.poll(() => result.messages.value.status).toBe('ready')
    expect(result.messages.value.data?.map((i) => i.entry_id)).toEqual(ids)
    await store.updateMessage({
      session_id,
      entry_id: ids[5],
      content: [{ type: 'text', text: 'from disk, then live' }],
    })
    expect(result.messages.value.data?.[5].message?.content).toEqual([
      { type: 'text', text: 'from disk, then live' },
    ])
    wrapper.unmount()
    await store.close()
    indexedDB.deleteDatabase(name)
  })
})
