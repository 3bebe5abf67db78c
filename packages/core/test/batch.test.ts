import 'fake-indexeddb/auto'
import { describe, expect, it } from 'vitest'
import {
  createStore,
  indexedDbStorage,
  memoryStorage,
  TRIGGER_TYPES,
  type Storage,
  type Store,
} from '../src/index.js'

// Contract semantics when several operations are issued in the same tick and so share one group
// commit (docs/architecture.md, principle 5): each still behaves as if it ran alone, in issue order.
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

async function open(storage: Storage): Promise<{ store: Store; events: string[] }> {
  const ids = { session: 0, entry: 0, attachment: 0 }
  const store = await createStore({
    storage,
    multiTab: false,
    now: () => 1_000_000,
    newId: (k) => `${k[0]}_${String(++ids[k]).padStart(3, '0')}`,
  })
  const events: string[] = []
  for (const t of TRIGGER_TYPES)
    store.on(t).subscribe((p) => events.push(`${t} ${'entry_id' in p ? p.entry_id : p.session_id}`))
  return { store, events }
}

let db = 0
const storages: Array<[string, () => Storage]> = [
  ['memoryStorage', () => memoryStorage()],
  ['fake-indexeddb', () => indexedDbStorage({ name: `batch-${process.pid}-${++db}` })],
]

describe.each(storages)('operations issued together over %s', (_, storage) => {
  it('apply in issue order: delete, ensure and append of one id start the session from scratch', async () => {
    const { store } = await open(storage())
    await store.ensure({ session_id: 'chat' })
    await store.append({ session_id: 'chat', message: user('old'), entry_id: 'turn' })
    const [deleted, ensured, appended] = await Promise.all([
      store.delete({ session_id: 'chat' }),
      store.ensure({ session_id: 'chat', title: 'new' }),
      store.append({ session_id: 'chat', message: user('new'), entry_id: 'turn' }),
    ])
    expect(deleted).toStrictEqual({ deleted: true })
    expect(ensured.created).toBe(true)
    // The old `turn` was deleted first, so this is a fresh append, not a replay.
    expect(appended).toStrictEqual({ entry_id: 'turn', parent_id: null, timestamp: 1_000_000 })
    expect((await store.messages({ session_id: 'chat' })).messages).toStrictEqual([
      { entry_id: 'turn', message: user('new') },
    ])
    expect((await store.get({ session_id: 'chat' }))?.meta).toMatchObject({ title: 'new', message_count: 1 })
    await store.close()
  })

  it('a failing operation fails alone and the others still chain', async () => {
    const { store, events } = await open(storage())
    const { session_id } = await store.create()
    events.length = 0
    const results = await Promise.allSettled([
      store.append({ session_id, message: user('a') }),
      store.append({ session_id: 'ghost', message: user('b') }),
      store.append({ session_id, message: user('c'), parent_id: 'nope' }),
      store.updateMessage({ session_id, entry_id: 'e_404', content: [] }),
      store.append({ session_id, message: user('d') }),
    ])
    expect(
      results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as { code: string }).code)),
    ).toStrictEqual(['ok', 'session/not_found', 'session/parent_not_found', 'session/entry_not_found', 'ok'])
    const ids = (await store.messages({ session_id })).messages.map((m) => m.entry_id)
    expect(ids).toHaveLength(2)
    expect((await store.getMessage({ session_id, entry_id: ids[1] }))?.entry.parent_id).toBe(ids[0])
    expect(events).toStrictEqual(ids.map((id) => `session::message-added ${id}`))
    expect((await store.get({ session_id }))?.meta.message_count).toBe(2)
    await store.close()
  })

  it('a read sees exactly the writes issued before it', async () => {
    const { store } = await open(storage())
    const { session_id } = await store.create()
    const [before, , after, meta] = await Promise.all([
      store.messages({ session_id }),
      store.append({ session_id, message: user('x') }),
      store.messages({ session_id }),
      store.get({ session_id }),
    ])
    expect(before).toStrictEqual({ messages: [] })
    expect(after.messages.map((m) => m.entry_id)).toStrictEqual(['e_001'])
    expect(meta?.meta.message_count).toBe(1)
    await store.close()
  })

  it('events are delivered before the operation resolves', async () => {
    const { store, events } = await open(storage())
    const { session_id } = await store.create()
    expect(events).toStrictEqual(['session::created s_001'])
    await store.append({ session_id, message: user('x') })
    expect(events).toStrictEqual(['session::created s_001', 'session::message-added e_001'])
    await store.close()
  })
})

describe('a failed commit (docs/architecture.md, principle 6)', () => {
  it('rejects every operation of the batch with session/storage, fires nothing and leaves memory equal to storage', async () => {
    const storage = memoryStorage()
    const { store, events } = await open(storage)
    const { session_id } = await store.create({ title: 'T' })
    await store.append({ session_id, message: user('kept') })
    const before = [await store.get({ session_id }), await store.messages({ session_id }), await store.list()]
    events.length = 0
    storage.fail!(new Error('QuotaExceededError'))
    const results = await Promise.allSettled([
      store.append({ session_id, message: user('lost') }),
      store.setMeta({ session_id, title: 'lost' }),
      store.setStatus({ session_id, status: 'working' }),
      store.create({}),
    ])
    for (const r of results)
      expect(r.status === 'rejected' && (r.reason as { code: string }).code).toBe('session/storage')
    expect(events).toStrictEqual([])
    expect([
      await store.get({ session_id }),
      await store.messages({ session_id }),
      await store.list(),
    ]).toStrictEqual(before)
    // A fresh store over the same storage reads the same thing: nothing was half-written.
    const reopened = await open(storage)
    expect([
      await reopened.store.get({ session_id }),
      await reopened.store.messages({ session_id }),
      await reopened.store.list(),
    ]).toStrictEqual(before)
    await reopened.store.close()
    // And the store keeps working afterwards.
    const next = await store.append({ session_id, message: user('after') })
    expect(next.parent_id).toBe('e_001')
    await store.close()
  })
})
