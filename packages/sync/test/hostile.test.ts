import { afterEach, describe, expect, it, vi } from 'vitest'
import { createStore, memoryStorage, SessionError, TRIGGER_TYPES, type Store } from '@colloquy/core'
import { createSync, OUTBOX, type Sync } from '../src/index.js'
import { replicaSnapshot } from '../../../test/support/replica-snapshot.js'
import { deepArray, hostileValidIds, invalidIds } from '../../core/test/hostile-cases.js'
import { loopback, type Loopback } from './loopback.js'

// The hostile ids and bodies of the core tests, through the sync outbox and back.
const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }], timestamp: 1 })

const cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

async function device(server: Loopback): Promise<{ store: Store; sync: Sync }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const sync = createSync(store, { url: 'http://unused', transport: server.transport() })
  cleanup.push(() => sync.close(), () => store.close())
  return { store, sync }
}

const outbox = async (store: Store): Promise<unknown[]> => (await store.storage.sideRecords!(OUTBOX)).map((r) => r.value)

describe('the sync outbox with hostile ids and bodies', () => {
  it('hostile-but-valid ids go through the outbox to the server and to another device exactly', async () => {
    const server = await loopback()
    const a = await device(server)
    const b = await device(server)
    for (const id of hostileValidIds) {
      await a.store.ensure({ session_id: id, title: id, metadata: { [id.slice(0, 64)]: id } })
      await a.store.append({ session_id: id, entry_id: id, message: user(id) })
    }
    expect(JSON.stringify(await outbox(a.store))).toContain(JSON.stringify(hostileValidIds[0]).slice(1, -1))
    a.sync.start()
    await a.sync.flush()
    expect(await outbox(a.store)).toStrictEqual([])
    b.sync.start()
    await b.sync.flush()
    await vi.waitFor(async () => expect((await b.store.list({ limit: 500 })).sessions).toHaveLength(hostileValidIds.length))
    for (const id of hostileValidIds) {
      expect((await server.store.getMessage({ session_id: id, entry_id: id }))!.entry).toMatchObject({ message: user(id) })
      expect((await b.store.get({ session_id: id }))!.meta.metadata).toStrictEqual({ [id.slice(0, 64)]: id })
    }
    expect(await replicaSnapshot(b.store)).toEqual(await replicaSnapshot(server.store))
  })

  it('refused ids and deep bodies leave the outbox untouched and reach no server', async () => {
    const server = await loopback()
    const a = await device(server)
    const { session_id } = await a.store.create({ title: 'base' })
    await a.store.append({ session_id, entry_id: 'e1', message: user('x') })
    const before = await outbox(a.store)
    expect(before.length).toBeGreaterThan(0)
    const events: unknown[] = []
    for (const type of TRIGGER_TYPES) a.store.on(type).subscribe((p) => events.push(p))
    const refused = async (run: () => Promise<unknown>): Promise<void> => {
      await expect(run()).rejects.toSatisfy((e: unknown) => e instanceof SessionError && e.code === 'session/invalid_request')
    }
    for (const [, bad] of invalidIds) {
      await refused(() => a.store.ensure({ session_id: bad }))
      await refused(() => a.store.append({ session_id, entry_id: bad, message: user('x') }))
      await refused(() => a.store.setMeta({ session_id, metadata: { [bad]: true } }))
    }
    await refused(() => a.store.append({ session_id, message: { role: 'custom', custom_type: 'c', content: [], timestamp: 1, details: deepArray(100_000) as never } }))
    expect(await outbox(a.store)).toStrictEqual(before)
    expect(events).toStrictEqual([])
    a.sync.start()
    await a.sync.flush()
    expect(await replicaSnapshot(server.store)).toEqual(await replicaSnapshot(a.store))
    expect((await server.store.list({})).sessions.map((s) => s.session_id)).toStrictEqual([session_id])
  })

  it('a server that sends a lone-surrogate id or a deep body gets nothing of it applied', async () => {
    const server = await loopback()
    const b = await device(server)
    const meta = (session_id: string) => ({ session_id, title: 'evil', description: '', status: 'idle' as const, kind: 'user' as const, created_at: 1, updated_at: 1, message_count: 0 })
    server.log.push(
      { seq: 1, change: { type: 'meta', meta: meta('q\ud800') } },
      { seq: 2, change: { type: 'meta', meta: { ...meta('deep'), metadata: { k: deepArray(100_000) as never } } } },
    )
    const seen: unknown[] = []
    b.store.on('session::created').subscribe((p) => seen.push(p))
    b.sync.start()
    await new Promise((r) => setTimeout(r, 200))
    expect((await b.store.list({})).sessions).toStrictEqual([])
    expect(seen).toStrictEqual([])
  })
})
