import { describe, expect, it, vi } from 'vitest'
import { createStore, memoryStorage, TRIGGER_TYPES, type Store } from '../src/index.js'
import { operations } from '../src/ops/index.js'

// Operations an app that only chats never calls are fetched on first use (`import()`). That first
// call must behave as if the code had always been there: it shares the transaction of the calls
// issued in its tick (docs/architecture.md, principle 5) and nothing issued after it overtakes it. Vitest runs
// each file in a fresh module graph, so nothing here is loaded before this file calls it.
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

async function open(storage = memoryStorage()): Promise<{ store: Store; events: string[] }> {
  const ids = { session: 0, entry: 0, attachment: 0 }
  const store = await createStore({
    storage,
    multiTab: false,
    prefetch: false,
    now: () => 1_000_000,
    newId: (k) => `${k[0]}_${String(++ids[k]).padStart(3, '0')}`,
  })
  const events: string[] = []
  for (const t of TRIGGER_TYPES)
    store.on(t).subscribe((p) => events.push(`${t} ${'entry_id' in p ? p.entry_id : p.session_id}`))
  return { store, events }
}

describe('operations fetched on first use', () => {
  it('join the transaction of their tick and keep issue order on their first call', async () => {
    expect(operations['session::messages-tail'].load).toBeTypeOf('function')
    expect(operations['session::set-status'].load).toBeTypeOf('function')
    const { store, events } = await open()
    const { session_id } = await store.create({ title: 'T' })
    await store.append({ session_id, message: user('first') })
    events.length = 0
    const before = store.engine.transactions
    const [a, tail, status, b] = await Promise.all([
      store.append({ session_id, message: user('a') }),
      store.messagesTail({ session_id }),
      store.setStatus({ session_id, status: 'working' }),
      store.append({ session_id, message: user('b') }),
    ])
    // The read sees the append issued before it and not the one issued after it.
    expect(
      tail.messages.map((i) => (i.message ? (i.message.content[0] as { text: string }).text : null)),
    ).toStrictEqual(['first', 'a'])
    expect(status).toStrictEqual({ status: 'working', previous_status: 'idle' })
    expect(b.parent_id).toBe(a.entry_id)
    expect(store.engine.transactions - before).toBe(1)
    expect(events).toStrictEqual([
      `session::message-added ${a.entry_id}`,
      `session::status-changed ${session_id}`,
      `session::message-added ${b.entry_id}`,
    ])
    expect(operations['session::messages-tail'].load).toBeUndefined()
    await store.close()
  })

  it('fail with the rest of their batch when its commit fails, and work afterwards', async () => {
    expect(operations['session::fork'].load).toBeTypeOf('function')
    const storage = memoryStorage()
    const { store, events } = await open(storage)
    const { session_id } = await store.create({ title: 'T' })
    const { entry_id } = await store.append({ session_id, message: user('kept') })
    events.length = 0
    storage.fail!(new Error('QuotaExceededError'))
    const results = await Promise.allSettled([
      store.append({ session_id, message: user('lost') }),
      store.fork({ session_id, entry_id }),
    ])
    expect(results.map((r) => r.status === 'rejected' && (r.reason as { code: string }).code)).toStrictEqual([
      'session/storage',
      'session/storage',
    ])
    expect(events).toStrictEqual([])
    expect((await store.list()).sessions.map((m) => m.session_id)).toStrictEqual([session_id])
    const fork = await store.fork({ session_id, entry_id })
    expect(fork.meta.forked_from).toBe(session_id)
    await store.close()
  })

  it('validate requests with the same errors as before the code was here, and refuse calls once closed', async () => {
    expect(operations['session::mention::get'].load).toBeTypeOf('function')
    const { store } = await open()
    await expect(store.mentionGet({ id: 5 } as never)).rejects.toMatchObject({
      code: 'session/invalid_request',
      message: 'session/invalid_request: id: expected a string, got number 5',
    })
    await expect(store.call('session::nope', {})).rejects.toMatchObject({ code: 'session/invalid_request' })
    const pending = store.getAttachment({ session_id: 's_x', attachment_id: 'a_x' })
    await store.close()
    // Issued before close: it ran (nothing there); issued after: refused.
    await expect(pending).resolves.toBeNull()
    await expect(store.listAttachments({ session_id: 's_x' })).rejects.toMatchObject({
      code: 'session/storage',
    })
  })
})

describe('the order of ticks', () => {
  it('a tick issued after one waiting for code waits for it: calls reach the engine in issue order', async () => {
    expect(operations['session::list-attachments'].load).toBeTypeOf('function')
    const { store } = await open()
    const { session_id } = await store.create({ title: 'T' })
    await store.append({ session_id, message: user('first') })
    const queued: string[] = []
    const enqueue = store.engine.enqueue.bind(store.engine)
    vi.spyOn(store.engine, 'enqueue').mockImplementation((fn, req, guard, resolve, reject) => {
      queued.push(fn)
      enqueue(fn, req, guard, resolve, reject)
    })
    await store.append({ session_id, message: user('a') })
    // The first call of an operation fetched on first use holds back the tick after it.
    const list = store.listAttachments({ session_id })
    await undefined
    const b = store.append({ session_id, message: user('b') })
    expect(await list).toStrictEqual({ attachments: [] })
    await b
    expect(queued).toStrictEqual(['session::append', 'session::list-attachments', 'session::append'])
    await store.close()
  })
})

describe('prefetching', () => {
  it('fetches the code of every operation soon after opening', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    await vi.waitFor(() => {
      for (const [fn, op] of Object.entries(operations)) expect(op.load, fn).toBeUndefined()
    })
    await store.close()
  })
})
