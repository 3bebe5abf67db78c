import { firstValueFrom } from 'rxjs'
import { describe, expect, it, vi } from 'vitest'
import { createStore, memoryStorage, TRIGGER_TYPES, type Storage, type Store } from '../src/index.js'
import { operations } from '../src/ops/index.js'

// What an app that only chats never loads at start is fetched on first use: creating a session,
// batches, branch moves and the live queries besides `messages$`. Vitest runs each file in a
// fresh module graph, so the first store here meets all of it unloaded (prefetch is off): each
// first call must behave as if the code had always been there.
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

  it('live queries subscribed first thing on a store, in the tick of an append, end on the committed state and never go back', async () => {
    const storage = memoryStorage()
    const first = await open(storage)
    const { session_id } = await first.store.create({ title: 'T' })
    const root = await first.store.append({ session_id, message: user('root') })
    await first.store.setDraft({ session_id, draft: 'typing' })
    await first.store.close()

    // A second store on the same storage: the live queries' code is not here yet.
    const { store } = await open(storage)
    const seen: Record<string, unknown[]> = {}
    const watch = (name: string, values: { subscribe(next: (v: unknown) => void): unknown }) => {
      seen[name] = []
      values.subscribe((v) => seen[name]!.push(v))
    }
    // Unsubscribed before its code arrives: it never emits.
    const early: unknown[] = []
    store.sessions$().subscribe((v) => early.push(v)).unsubscribe()
    watch('session$', store.session$(session_id))
    watch('sessions$', store.sessions$())
    watch('tree$', store.tree$(session_id))
    watch('entry$', store.entry$(session_id, root.entry_id))
    watch('branch$', store.branch$(session_id, 'x1'))
    watch('draft$', store.draft$(session_id))
    watch('attachments$', store.attachments$(session_id))
    // Issued in the same tick as the subscriptions, before the queries' code is here.
    await Promise.all([
      store.append({ session_id, entry_id: 'x1', parent_id: root.entry_id, message: user('reply') }),
      store.append({ session_id, entry_id: 'x2', parent_id: root.entry_id, message: user('another reply') }),
    ])
    await vi.waitFor(() => expect((seen['tree$']!.at(-1) as { entries: Map<string, unknown> } | undefined)?.entries.size).toBe(3))

    const trees = seen['tree$'] as Array<{ active_leaf: string; entries: Map<string, unknown> }>
    // Sizes never shrink: no value older than one already shown.
    expect(trees.map((t) => t.entries.size)).toStrictEqual([...trees.map((t) => t.entries.size)].sort((x, y) => x - y))
    expect(trees.at(-1)!.active_leaf).toBe('x2')
    const metas = seen['session$'] as Array<{ message_count: number }>
    expect(metas.at(-1)!.message_count).toBe(3)
    expect(metas.map((m) => m.message_count)).toStrictEqual([...metas.map((m) => m.message_count)].sort((x, y) => x - y))
    expect((seen['sessions$']!.at(-1) as Array<{ message_count: number }>).map((m) => m.message_count)).toStrictEqual([3])
    expect((seen['entry$']!.at(-1) as { id: string }).id).toBe(root.entry_id)
    expect(seen['branch$']!.at(-1)).toStrictEqual({ index: 0, count: 2, siblings: ['x1', 'x2'] })
    expect(seen['draft$']).toStrictEqual([{ draft: 'typing', attachments: [] }])
    expect(seen['attachments$']).toStrictEqual([[]])
    // Once the code is here a query emits on subscribe, as before.
    let now: unknown
    store.session$(session_id).subscribe((m) => (now = m))
    expect(now).toBe(metas.at(-1))
    expect(await firstValueFrom(store.tree$('s_missing'))).toBeNull()
    expect(early).toStrictEqual([])
    await store.close()
  })
})
