import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, TRIGGER_TYPES, type Storage, type Store } from '../src/index.js'
import { operations } from '../src/ops/index.js'

// What an app that only chats never loads at start is fetched on first use, creating a session,
// batches and branch moves among it. Vitest runs each file in a fresh module graph, so the first
// store here meets all of it unloaded (prefetch is off): each first call must behave as if the
// code had always been there.
const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }], timestamp: 0 })
const text = (m: { message?: { content: unknown[] } }) => (m.message?.content[0] as { text: string }).text

async function open(storage: Storage = memoryStorage()): Promise<{ store: Store; events: string[] }> {
  let n = 0
  const store = await createStore({ storage, multiTab: false, prefetch: false, now: () => 1_000_000, newId: (k) => `${k[0]}_${++n}` })
  const events: string[] = []
  for (const t of TRIGGER_TYPES) store.on(t).subscribe((p) => events.push(`${t} ${'entry_id' in p ? p.entry_id : p.session_id}`))
  return { store, events }
}

describe('code fetched on first use', () => {
  it('ensure, appendMany and setActiveLeaf, first calls of a store, share their tick with an append and keep issue order', async () => {
    for (const fn of ['session::ensure', 'session::append-many', 'session::set-active-leaf'] as const) expect(operations[fn].load, fn).toBeTypeOf('function')
    const { store, events } = await open()
    const before = store.engine.transactions
    // The append is issued after `ensure` in the same tick: it must not run before the session
    // exists, although its own code is here and ensure's is not.
    const [ensured, a, many, leaf] = await Promise.all([
      store.ensure({ session_id: 'chat' }),
      store.append({ session_id: 'chat', message: user('a') }),
      store.appendMany({ session_id: 'chat', messages: [user('b'), user('c')] }),
      store.setActiveLeaf({ session_id: 'chat', entry_id: 'e_1' }),
    ])
    expect(ensured.created).toBe(true)
    expect(a.parent_id).toBeNull()
    expect(many.entry_ids).toStrictEqual(['e_2', 'e_3'])
    expect(leaf).toStrictEqual({ active_leaf: 'e_1' })
    expect(store.engine.transactions - before).toBe(1)
    expect(events).toStrictEqual(['session::created chat', 'session::message-added e_1', 'session::message-added e_2', 'session::message-added e_3'])
    expect((await store.messages({ session_id: 'chat' })).messages.map(text)).toStrictEqual(['a'])
    expect(operations['session::append-many'].load).toBeUndefined()
    await store.close()
  })
})
