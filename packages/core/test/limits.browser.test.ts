import { describe, expect, it } from 'vitest'
import { firstValueFrom, filter } from 'rxjs'
import { SessionError, TRIGGER_TYPES, type ReplicaChange, type Store } from '../src/index.js'
import { deepArray, hostileValidIds, invalidIds } from './hostile-cases.js'
import { idbStores, user } from './idb-stores.js'

// The hostile ids and bodies of the node tests, on real IndexedDB in Chromium and across two
// stores on one database (the multi-tab relay over BroadcastChannel).
const { dbName, storeOn, close } = idbStores('limits-browser')
/** Resolves when `store` hears of the message `entry_id` (from its own write or over the relay). */
const heard = (store: Store, session_id: string, entry_id: string): Promise<unknown> =>
  firstValueFrom(
    store.on('session::message-added', { session_id }).pipe(filter((e) => e.entry_id === entry_id)),
  )

/** Every IndexedDB record of the database, read with the raw API: what "nothing written" means. */
async function rawDump(name: string): Promise<Record<string, unknown[]>> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const req = indexedDB.open(name)
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })
  const out: Record<string, unknown[]> = {}
  for (const store of [...db.objectStoreNames]) {
    out[store] = await new Promise<unknown[]>((resolve, reject) => {
      const req = db.transaction(store).objectStore(store).getAll()
      req.onsuccess = () => resolve(req.result)
      req.onerror = () => reject(req.error)
    })
  }
  db.close()
  return out
}

const events = (store: Store): unknown[] => {
  const seen: unknown[] = []
  for (const type of TRIGGER_TYPES) store.on(type).subscribe((p) => seen.push([type, p]))
  return seen
}

async function refused(run: () => Promise<unknown>, field: string): Promise<void> {
  const e = await run().then(
    () => undefined,
    (x: unknown) => x,
  )
  expect(e).toBeInstanceOf(SessionError)
  expect((e as SessionError).code).toBe('session/invalid_request')
  expect((e as SessionError).message).toContain(field)
}

describe('hostile ids and bodies on real IndexedDB', () => {
  it('hostile-but-valid ids are distinct keys that round-trip exactly, also after reopening', async () => {
    const name = dbName()
    const a = await storeOn(name)
    for (const id of hostileValidIds) {
      await a.ensure({ session_id: id, title: id })
      await a.append({ session_id: id, entry_id: id, message: user(id) })
    }
    await close(a)
    const b = await storeOn(name)
    const listed = (await b.list({ limit: 500 })).sessions.map((s) => s.session_id).sort()
    expect(listed).toStrictEqual([...hostileValidIds].sort())
    for (const id of hostileValidIds) {
      const page = await b.messages({ session_id: id })
      expect(page.messages.map((m) => [m.entry_id, m.message!.content[0]])).toStrictEqual([
        [id, { type: 'text', text: id }],
      ])
    }
  })

  it('invalid ids and deep bodies are refused before IndexedDB sees them: nothing written, no event, here or in another tab', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    const { session_id } = await a.create({ title: 'base' })
    const relayed = heard(b, session_id, 'e1')
    await a.append({ session_id, entry_id: 'e1', message: user('x') })
    await a.flush()
    // The setup's own events have reached the other tab before its events are watched.
    await relayed
    const before = await rawDump(name)
    const seenA = events(a)
    const seenB = events(b)
    for (const [, bad] of invalidIds) {
      await refused(() => a.ensure({ session_id: bad }), 'session_id')
      await refused(() => a.append({ session_id, entry_id: bad, message: user('x') }), 'entry_id')
      await refused(() => a.append({ session_id, parent_id: bad, message: user('x') }), 'parent_id')
      await refused(() => a.setMeta({ session_id, metadata: { [bad]: 1 } }), 'metadata')
      await refused(
        () => a.applyReplica([{ type: 'leaf', session_id: bad, entry_id: null }], { policy: 'pull' }),
        'changes[0].session_id',
      )
      await refused(
        () =>
          a.importSession({
            meta: {
              session_id: bad,
              title: '',
              description: '',
              status: 'idle',
              kind: 'user',
              created_at: 1,
              updated_at: 1,
              message_count: 0,
            },
            entries: [],
            active_leaf: null,
          }),
        'meta.session_id',
      )
    }
    await refused(
      () => a.setMeta({ session_id, metadata: { deep: deepArray(100_000) as never } }),
      'metadata.deep',
    )
    await refused(
      () => a.append({ session_id, custom: { custom_type: 'c', data: deepArray(100_000) as never } }),
      'custom.data',
    )
    await refused(
      () =>
        a.applyReplica(
          [
            {
              type: 'entry',
              session_id,
              entry: {
                id: 'd',
                parent_id: null,
                timestamp: 1,
                revision: 0,
                kind: 'custom',
                custom_type: 'c',
                data: deepArray(100_000),
              },
            } as ReplicaChange,
          ],
          { policy: 'push' },
        ),
      'changes[0].entry.data',
    )
    await a.flush()
    expect(await rawDump(name)).toStrictEqual(before)
    // A valid write after the refused ones, in a session of its own: once the other tab hears of
    // it, any event a refused call had sent would have reached it first (the relay keeps the
    // order of commits).
    await a.ensure({ session_id: 'marker' })
    const marked = heard(b, 'marker', 'marker')
    await a.append({ session_id: 'marker', entry_id: 'marker', message: user('marker') })
    await marked
    const notMarker = (seen: unknown[]) =>
      (seen as Array<[string, { session_id: string }]>).filter(([, p]) => p.session_id !== 'marker')
    expect(notMarker(seenA)).toStrictEqual([])
    expect(notMarker(seenB)).toStrictEqual([])
    expect(seenB.length).toBeGreaterThan(0)
  })

  it('the relay carries hostile-but-valid ids to the other tab exactly, live', async () => {
    const name = dbName()
    const a = await storeOn(name)
    const b = await storeOn(name)
    for (const id of hostileValidIds) {
      const seen = firstValueFrom(
        b.on('session::message-added', { session_id: id }).pipe(filter((p) => p.entry_id === id)),
      )
      await a.ensure({ session_id: id, metadata: { [id.slice(0, 64)]: id } })
      await a.append({ session_id: id, entry_id: id, message: user(id) })
      expect((await seen).session_id).toBe(id)
    }
    for (const id of hostileValidIds) {
      const meta = await firstValueFrom(b.session$(id).pipe(filter((m) => m !== null)))
      expect(meta!.metadata).toStrictEqual({ [id.slice(0, 64)]: id })
      expect((await b.getMessage({ session_id: id, entry_id: id }))!.entry).toMatchObject({
        message: user(id),
      })
    }
    // The NFC and NFD forms of é stayed two sessions in the other tab too.
    expect(await b.get({ session_id: 'caf\u00e9' })).not.toBeNull()
    expect(await b.get({ session_id: 'cafe\u0301' })).not.toBeNull()
    expect((await b.list({ limit: 500 })).sessions).toHaveLength(hostileValidIds.length)
  })
})
