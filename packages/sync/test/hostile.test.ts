import { afterEach, describe, expect, it, vi } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { createStore, memoryStorage, SessionError, TRIGGER_TYPES, type Store } from '@colloquy/core'
import type { PullResponse, StreamMessage } from '@colloquy/core/protocol'
import { createSync, type Sync, type Transport } from '../src/index.js'
import { OUTBOX } from '../src/outbox.js'
import { replicaSnapshot } from '../../../test/support/replica-snapshot.js'
import { deepArray, hostileValidIds, invalidIds } from '../../core/test/hostile-cases.js'
import { loopback, type Loopback } from './loopback.js'

// The hostile ids and bodies of the core tests, through the sync outbox and back.
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 1,
})

const cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

async function device(server: Loopback): Promise<{ store: Store; sync: Sync }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const sync = createSync(store, { url: 'http://unused', transport: server.transport() })
  cleanup.push(
    () => sync.close(),
    () => store.close(),
  )
  return { store, sync }
}

const outbox = async (store: Store): Promise<unknown[]> =>
  (await store.storage.sideRecords!(OUTBOX)).map((r) => r.value)

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
    await vi.waitFor(async () =>
      expect((await b.store.list({ limit: 500 })).sessions).toHaveLength(hostileValidIds.length),
    )
    for (const id of hostileValidIds) {
      expect((await server.store.getMessage({ session_id: id, entry_id: id }))!.entry).toMatchObject({
        message: user(id),
      })
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
      await expect(run()).rejects.toSatisfy(
        (e: unknown) => e instanceof SessionError && e.code === 'session/invalid_request',
      )
    }
    for (const [, bad] of invalidIds) {
      await refused(() => a.store.ensure({ session_id: bad }))
      await refused(() => a.store.append({ session_id, entry_id: bad, message: user('x') }))
      await refused(() => a.store.setMeta({ session_id, metadata: { [bad]: true } }))
    }
    await refused(() =>
      a.store.append({
        session_id,
        message: {
          role: 'custom',
          custom_type: 'c',
          content: [],
          timestamp: 1,
          details: deepArray(100_000) as never,
        },
      }),
    )
    expect(await outbox(a.store)).toStrictEqual(before)
    expect(events).toStrictEqual([])
    a.sync.start()
    await a.sync.flush()
    expect(await replicaSnapshot(server.store)).toEqual(await replicaSnapshot(a.store))
    expect((await server.store.list({})).sessions.map((s) => s.session_id)).toStrictEqual([session_id])
  })

  const meta = (session_id: string) => ({
    session_id,
    title: 'evil',
    description: '',
    status: 'idle' as const,
    kind: 'user' as const,
    created_at: 1,
    updated_at: 1,
    message_count: 0,
  })
  it.each([
    [
      'a lone-surrogate id',
      () => meta('q\ud800'),
      /^session\/invalid_request: changes\[0\]\.meta\.session_id: .*lone surrogate/,
    ],
    [
      'a deep body',
      () => ({ ...meta('deep'), metadata: { k: deepArray(100_000) as never } }),
      /^session\/invalid_request: changes\[0\]\.meta\.metadata\.k.*nested deeper than 64 levels$/,
    ],
  ])('a server that sends %s gets nothing of it applied', async (_, bad, field) => {
    const server = await loopback()
    const inner = server.transport()
    // The page is handed over as it is: the loopback's structured clone cannot copy a body this
    // deep, and the sync's own check is what is tested here.
    const page = {
      changes: [{ seq: 1, change: { type: 'meta', meta: bad() } }],
      checkpoint: 1,
      head: 1,
      more: false,
    }
    const transport: Transport = {
      ...inner,
      stream: inner.stream.bind(inner),
      pull: async () => page as PullResponse,
    }
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const sync = createSync(store, { url: 'http://unused', transport })
    cleanup.push(
      () => sync.close(),
      () => store.close(),
    )
    const seen: unknown[] = []
    store.on('session::created').subscribe((p) => seen.push(p))
    const failed = firstValueFrom(sync.status$.pipe(filter((s) => s.state === 'error')))
    sync.start()
    // The pull has been refused (the sync says so, naming the field) before anything is checked.
    expect((await failed).error).toMatch(field)
    expect((await store.list({})).sessions).toStrictEqual([])
    expect(seen).toStrictEqual([])
  })
})

describe('a server whose answers are malformed', () => {
  // Wraps the loopback: `pull` and the stream answer with `bad` until `healed`, then as usual.
  async function twisted(bad: {
    pull?: (real: PullResponse) => unknown
    frame?: (real: StreamMessage) => unknown
  }) {
    const server = await loopback()
    const inner = server.transport()
    const state = { healed: false, pulls: 0, frames: 0 }
    const transport: Transport = {
      ...inner,
      async pull(since, limit, epoch) {
        const real = await inner.pull(since, limit, epoch)
        state.pulls++
        return (state.healed || !bad.pull ? real : bad.pull(real)) as PullResponse
      },
      stream(since, onMessage, onClose, epoch) {
        return inner.stream(
          since,
          (m) => {
            state.frames++
            onMessage((state.healed || !bad.frame ? m : bad.frame(m)) as StreamMessage)
          },
          onClose,
          epoch,
        )
      },
    }
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const sync = createSync(store, { url: 'http://unused', transport })
    cleanup.push(
      () => sync.close(),
      () => store.close(),
      () => server.close(),
    )
    const checkpoint = async (): Promise<unknown> =>
      (await store.storage.sideRecords!('kv')).find((r) => r.key === 'sync:checkpoint')?.value
    return { server, store, sync, state, checkpoint }
  }

  const seed = async (server: Loopback, n: number): Promise<string> => {
    const { session_id } = await server.store.create({ title: 'remote' })
    for (let i = 0; i < n; i++) await server.store.append({ session_id, message: user(`m${i}`) })
    return session_id
  }

  it.each([
    ['a NaN checkpoint', (p: PullResponse) => ({ ...p, checkpoint: Number.NaN })],
    ['a checkpoint behind its own changes', (p: PullResponse) => ({ ...p, checkpoint: 0 })],
    [
      'a fractional seq',
      (p: PullResponse) => ({ ...p, changes: p.changes.map((c) => ({ ...c, seq: c.seq + 0.5 })) }),
    ],
    ['changes out of order', (p: PullResponse) => ({ ...p, changes: [...p.changes].reverse() })],
    [
      'more without moving the cursor',
      (p: PullResponse) => ({ changes: [], checkpoint: 0, head: p.head, more: true }),
    ],
    ['a string head', (p: PullResponse) => ({ ...p, head: 'lots' })],
  ])(
    'a pull page with %s is refused whole: nothing applied, the checkpoint untouched, then it converges',
    async (_, bad) => {
      const t = await twisted({ pull: bad })
      const session_id = await seed(t.server, 3)
      const failed = firstValueFrom(t.sync.status$.pipe(filter((s) => s.state === 'error')))
      t.sync.start()
      // The page has been refused (the sync says so) before anything is checked.
      await failed
      expect((await t.store.list({})).sessions).toStrictEqual([])
      expect(await t.checkpoint()).toBeUndefined()
      // The pull loop waits out its backoff (backoff-holds.test.ts) rather than pulling again at once.
      expect(t.state.pulls).toBe(1)
      t.state.healed = true
      await t.sync.flush()
      expect((await t.store.messages({ session_id })).messages).toHaveLength(3)
      expect(await t.checkpoint()).toBe(t.server.log.length)
    },
  )

  it.each([
    ['an error frame', () => ({ type: 'error', error: { code: 'session/invalid_request', message: 'no' } })],
    ['a frame of an unknown type', () => ({ type: 'surprise', head: 1 })],
    ['a frame with a NaN head', (m: StreamMessage) => ({ ...m, head: Number.NaN })],
    [
      'a frame whose seq goes backwards',
      (m: StreamMessage) =>
        m.type === 'changes' ? { ...m, changes: m.changes.map((c) => ({ ...c, seq: 0 })) } : m,
    ],
  ])(
    'a stream with %s is dropped: the head stays a number and the device still converges',
    async (_, bad) => {
      const t = await twisted({ frame: bad })
      const session_id = await seed(t.server, 1)
      t.sync.start()
      await t.sync.flush()
      // Live changes arrive through the bad stream now.
      await t.server.store.append({ session_id, message: user('live') })
      await vi.waitFor(() => expect(t.state.frames).toBeGreaterThan(0))
      const statuses: string[] = []
      t.sync.status$.subscribe((s) => statuses.push(s.state))
      t.state.healed = true
      await t.sync.flush()
      await vi.waitFor(async () => expect((await t.store.messages({ session_id })).messages).toHaveLength(2))
      // flush() settles only when the checkpoint reached a numeric head: NaN would never compare.
      expect(await t.checkpoint()).toBe(t.server.log.length)
      expect(statuses.at(-1)).toBe('idle')
    },
  )
})
