import 'fake-indexeddb/auto'
import { describe, expect, it, vi } from 'vitest'
import {
  createStore,
  indexedDbStorage,
  memoryStorage,
  TRIGGER_TYPES,
  type Storage,
  type Store,
} from '../src/index.js'
import { operations } from '../src/ops/index.js'

// What an app that only chats never loads at start is fetched on first use, creating a session,
// batches and branch moves among it. Vitest runs each file in a fresh module graph, so the first
// store here meets all of it unloaded (prefetch is off): each first call must behave as if the
// code had always been there.
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})
const text = (m: { message?: { content: unknown[] } }) => (m.message?.content[0] as { text: string }).text

async function open(storage: Storage = memoryStorage()): Promise<{ store: Store; events: string[] }> {
  let n = 0
  const store = await createStore({
    storage,
    multiTab: false,
    prefetch: false,
    now: () => 1_000_000,
    newId: (k) => `${k[0]}_${++n}`,
  })
  const events: string[] = []
  for (const t of TRIGGER_TYPES)
    store.on(t).subscribe((p) => events.push(`${t} ${'entry_id' in p ? p.entry_id : p.session_id}`))
  return { store, events }
}

describe('code fetched on first use', () => {
  it('ensure, appendMany and setActiveLeaf, first calls of a store, share their tick with an append and keep issue order', async () => {
    for (const fn of ['session::ensure', 'session::append-many', 'session::set-active-leaf'] as const)
      expect(operations[fn].load, fn).toBeTypeOf('function')
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
    expect(events).toStrictEqual([
      'session::created chat',
      'session::message-added e_1',
      'session::message-added e_2',
      'session::message-added e_3',
    ])
    expect((await store.messages({ session_id: 'chat' })).messages.map(text)).toStrictEqual(['a'])
    expect(operations['session::append-many'].load).toBeUndefined()
    await store.close()
  })
})

/**
 * A store in a module graph of its own, on `storage` written by another: everything fetched on
 * first use is unloaded (the engine's batch code, the request schemas, the append and update
 * operations), as in a page that just opened.
 */
async function fresh(
  storage: Storage,
): Promise<{ store: Store; events: string[]; ops: typeof operations; writes: () => number }> {
  vi.resetModules()
  const core = await import('../src/index.js')
  const { operations: ops } = await import('../src/ops/index.js')
  expect(ops['session::append'].load, 'append is fetched on first use').toBeTypeOf('function')
  expect(ops['session::update-message'].load, 'updateMessage is fetched on first use').toBeTypeOf('function')
  let n = 100
  const store = await core.createStore({
    storage,
    multiTab: false,
    prefetch: false,
    now: () => 2_000_000,
    newId: (k) => `${k[0]}_${++n}`,
  })
  const events: string[] = []
  for (const t of TRIGGER_TYPES)
    store.on(t).subscribe((p) => events.push(`${t} ${'entry_id' in p ? p.entry_id : p.session_id}`))
  let writes = 0
  const transact = storage.transact.bind(storage)
  storage.transact = (step) => (writes++, transact(step))
  return { store, events, ops, writes: () => writes }
}

/** A storage holding session `chat` with one message `e_1`. */
async function written(): Promise<Storage> {
  const storage = memoryStorage()
  const { store } = await open(storage)
  await store.ensure({ session_id: 'chat' })
  await store.append({ session_id: 'chat', message: user('hello') })
  await store.close()
  return storage
}

describe('the write path fetched on first use', () => {
  it("append and updateMessage as a page's first calls, in one tick: one transaction, issue order, events after it", async () => {
    const { store, events, ops, writes } = await fresh(await written())
    const seen: string[][] = []
    store.messages$({ session_id: 'chat' }).subscribe((items) => seen.push(items.map((i) => text(i))))
    await vi.waitFor(() => expect(seen).toStrictEqual([['hello']]))
    const [a, updated, b] = await Promise.all([
      store.append({ session_id: 'chat', message: user('a') }),
      store.updateMessage({
        session_id: 'chat',
        entry_id: 'e_1',
        content: [{ type: 'text', text: 'hello!' }],
      }),
      store.append({ session_id: 'chat', message: user('b') }),
    ])
    expect(a.parent_id).toBe('e_1')
    expect(b.parent_id).toBe(a.entry_id)
    expect(updated).toStrictEqual({ updated: true, revision: 1 })
    expect(writes()).toBe(1)
    expect(events).toStrictEqual([
      `session::message-added ${a.entry_id}`,
      'session::message-updated e_1',
      `session::message-added ${b.entry_id}`,
    ])
    // One emission for the commit, never one before it.
    expect(seen).toStrictEqual([['hello'], ['hello!', 'a', 'b']])
    expect(ops['session::append'].load).toBeUndefined()
    await store.close()
  })

  it('updateMessage alone as the first call streams into a message written before the page opened', async () => {
    const storage = await written()
    const { store, events, writes } = await fresh(storage)
    const tokens = ['h', 'he', 'hel']
    const results = await Promise.all(
      tokens.map((t) =>
        store.updateMessage({ session_id: 'chat', entry_id: 'e_1', content: [{ type: 'text', text: t }] }),
      ),
    )
    expect(results.map((r) => r.revision)).toStrictEqual([1, 2, 3])
    expect(writes()).toBe(1)
    expect(events).toStrictEqual([
      'session::message-updated e_1',
      'session::message-updated e_1',
      'session::message-updated e_1',
    ])
    const stored = (await storage.entries('chat')).find((e) => e.id === 'e_1')
    expect(stored?.kind === 'message' && text(stored)).toBe('hel')
    await store.close()
  })

  it('a bad request as the first call: the same SessionError, as a rejected promise, nothing written, no event', async () => {
    const storage = await written()
    const { store, events, writes } = await fresh(storage)
    const bad = [
      () =>
        store.append({
          session_id: 'chat',
          message: { role: 'user', content: 'nope', timestamp: 0 },
        } as never),
      () => store.append({ session_id: 5 } as never),
      () => store.updateMessage({ session_id: 'chat', entry_id: 'e_1' } as never),
      () => store.call('session::append', null),
    ]
    for (const call of bad) {
      let promise!: Promise<unknown>
      expect(() => (promise = call())).not.toThrow()
      await expect(promise).rejects.toMatchObject({ name: 'SessionError', code: 'session/invalid_request' })
    }
    // Refused before anything was queued: no transaction.
    expect(writes()).toBe(0)
    expect(events).toStrictEqual([])
    await expect(store.append({ session_id: 'chat', message: user('x') } as never)).resolves.toMatchObject({
      parent_id: 'e_1',
    })
    // A refusal by the operation itself (after the schema): its own code, nothing written.
    await expect(
      store.updateMessage({ session_id: 'chat', entry_id: 'e_nope', content: [] }),
    ).rejects.toMatchObject({ code: 'session/entry_not_found' })
    await expect(store.append({ session_id: 'gone', message: user('x') })).rejects.toMatchObject({
      code: 'session/not_found',
    })
    expect(events).toStrictEqual(['session::message-added e_101'])
    expect((await storage.entries('chat')).map((e) => e.id)).toStrictEqual(['e_1', 'e_101'])
    await store.close()
  })

  it("default ids (their code fetched with the first call) on a page's first append", async () => {
    const storage = await written()
    vi.resetModules()
    const core = await import('../src/index.js')
    const store = await core.createStore({ storage, multiTab: false, prefetch: false })
    const [a, b] = await Promise.all([
      store.append({ session_id: 'chat', message: user('a') }),
      store.append({ session_id: 'chat', message: user('b') }),
    ])
    expect(a.entry_id).toMatch(/^e_[A-Za-z0-9_-]{21}$/)
    expect(b.parent_id).toBe(a.entry_id)
    expect(b.entry_id).not.toBe(a.entry_id)
    await store.close()
  })

  it('an internal write as the first call (a recipe update) fetches the batch code itself', async () => {
    const storage = await written()
    const { store, events, writes } = await fresh(storage)
    const { updateMessage } = await import('../src/recipe.js')
    const results = await Promise.all([
      updateMessage(
        store,
        { session_id: 'chat', entry_id: 'e_1' },
        (draft) => void ((draft[0] as { text: string }).text += '!'),
      ),
      updateMessage(
        store,
        { session_id: 'chat', entry_id: 'e_1' },
        (draft) => void ((draft[0] as { text: string }).text += '?'),
      ),
    ])
    expect(results.map((r) => r.revision)).toStrictEqual([1, 2])
    expect(writes()).toBe(1)
    expect(events).toStrictEqual(['session::message-updated e_1', 'session::message-updated e_1'])
    const stored = (await storage.entries('chat')).find((e) => e.id === 'e_1')
    expect(stored?.kind === 'message' && text(stored)).toBe('hello!?')
    await store.close()
  })

  it('the first calls wait for the code and a later tick does not overtake them', async () => {
    const { store, writes } = await fresh(await written())
    const first = store.append({ session_id: 'chat', message: user('first') })
    await Promise.resolve()
    const second = store.append({ session_id: 'chat', message: user('second') })
    const [a, b] = await Promise.all([first, second])
    expect(b.parent_id).toBe(a.entry_id)
    expect(writes()).toBe(2)
    await store.close()
  })

  it("the first write on an IndexedDB storage, a page's first call: its write half comes with the batch code, one transaction, on disk", async () => {
    const name = `first-use-${Date.now()}`
    {
      const { store } = await open(indexedDbStorage({ name }))
      await store.ensure({ session_id: 'chat' })
      await store.append({ session_id: 'chat', message: user('hello') })
      await store.close()
    }
    vi.resetModules()
    const core = await import('../src/index.js')
    const { writerCode } = await import('../src/storage/idb/idb-storage.js')
    const storage = core.indexedDbStorage({ name })
    // The storage's commits, trust and writer lock are not here yet: only opening and reading are.
    expect(writerCode.value).toBeUndefined()
    let n = 100
    const store = await core.createStore({
      storage,
      multiTab: false,
      prefetch: false,
      now: () => 2_000_000,
      newId: (k) => `${k[0]}_${++n}`,
    })
    const events: string[] = []
    store.on('session::message-added').subscribe((p) => events.push(p.entry_id))
    expect((await store.messages({ session_id: 'chat' })).messages.map(text)).toStrictEqual(['hello'])
    const before = store.engine.transactions
    const [a, updated, b] = await Promise.all([
      store.append({ session_id: 'chat', message: user('a') }),
      store.updateMessage({
        session_id: 'chat',
        entry_id: 'e_1',
        content: [{ type: 'text', text: 'hello!' }],
      }),
      store.append({ session_id: 'chat', message: user('b') }),
    ])
    expect(store.engine.transactions - before).toBe(1)
    expect([a.parent_id, b.parent_id]).toStrictEqual(['e_1', a.entry_id])
    expect(updated).toStrictEqual({ updated: true, revision: 1 })
    expect(events).toStrictEqual([a.entry_id, b.entry_id])
    expect(writerCode.value).toBeDefined()
    // Here now: a later call asks for no readiness promise (`load()` gives undefined once loaded).
    expect(store.engine.prepare()).toBeUndefined()
    expect(storage.prepare!()).toBeUndefined()
    await store.close()
    // On disk, as a new page reads it.
    const reopened = core.indexedDbStorage({ name })
    // Opening reads no head (issue 28): the head is read on demand, the session listed by page.
    expect(await reopened.open()).toStrictEqual([])
    const head = await reopened.paged!.head('chat')
    expect([head?.leaf, head?.meta.message_count]).toStrictEqual([b.entry_id, 3])
    const page = await reopened.paged!.page({ order: 'updated_desc', limit: 10 })
    expect(page.map((h) => h.meta.session_id)).toStrictEqual(['chat'])
    expect(
      (await reopened.entries('chat')).map((e) => (e.kind === 'message' ? text(e) : e.id)),
    ).toStrictEqual(['hello!', 'a', 'b'])
    reopened.close()
  })

  it('an IndexedDB storage used on its own fetches its write half on its first transaction', async () => {
    vi.resetModules()
    const core = await import('../src/index.js')
    const storage = core.indexedDbStorage({ name: `alone-${Date.now()}` })
    expect(await storage.open()).toStrictEqual([])
    await storage.transact(async () => ({
      heads: new Map(),
      entries: new Map(),
      deleted: new Set(),
      side: [{ store: 'kv', key: 'k', value: 1 }],
    }))
    expect(await storage.sideRecords!('kv')).toStrictEqual([{ key: 'k', value: 1 }])
    storage.close()
  })
})
