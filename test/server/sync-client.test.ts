import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Store } from '@colloquy/core'
import { createSync, type Sync } from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import { startServer, type ServerProcess } from './helpers.js'

// The sync client of @colloquy/sync against a real server process: the protocol end to end.
let server: ServerProcess
beforeAll(async () => {
  server = await startServer(['--memory', '--token', 'alice=tok-a', '--token', 'bob=tok-b'])
})
afterAll(() => server?.stop())

const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

async function device(token: string): Promise<{ store: Store; sync: Sync }> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const sync = createSync(store, {
    url: server.url,
    token,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
  })
  cleanup.push(
    () => store.close(),
    () => sync.close(),
  )
  sync.start()
  return { store, sync }
}

/** Every session of a replica: meta (but updated_at), leaf, entries. */
async function state(store: Store): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const meta of (await store.list({ limit: 500 })).sessions) {
    await store.engine.ensureLoaded(meta.session_id)
    const s = store.engine.state.sessions.get(meta.session_id)!
    const { updated_at: _u, ...rest } = meta
    out[meta.session_id] = {
      meta: rest,
      leaf: s.head.leaf,
      entries: [...s.entries!.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
    }
  }
  return out
}

const user = (t: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text: t }],
  timestamp: 0,
})

describe('@colloquy/sync against colloquy-server', () => {
  it('two devices of one user converge (streamed updates, concurrent appends as siblings, deletion); another user sees nothing', async () => {
    const a1 = await device('tok-a')
    const a2 = await device('tok-a')
    const b = await device('tok-b')
    const { session_id } = await a1.store.create({ title: 'shared' })
    const { entry_id } = await a1.store.append({ session_id, message: user('question') })
    const reply = await a1.store.append({
      session_id,
      message: {
        role: 'assistant',
        content: [],
        stop_reason: 'end',
        model: 'm',
        provider: 'p',
        timestamp: 0,
      },
    })
    for (const text of ['It', 'It is', 'It is sunny.'])
      await a1.store.updateMessage({
        session_id,
        entry_id: reply.entry_id,
        content: [{ type: 'text', text }],
      })
    await a1.sync.flush()
    await a2.sync.flush()
    expect(await state(a2.store)).toStrictEqual(await state(a1.store))
    expect((await a2.store.getMessage({ session_id, entry_id: reply.entry_id }))!.entry).toMatchObject({
      revision: 3,
    })

    // Both answer the question at once: two siblings, the same tree on both devices.
    await a1.store.append({ session_id, parent_id: entry_id, message: user('from a1') })
    await a2.store.append({ session_id, parent_id: entry_id, message: user('from a2') })
    await Promise.all([a1.sync.flush(), a2.sync.flush()])
    await Promise.all([a1.sync.flush(), a2.sync.flush()])
    const tree = (await state(a1.store))[session_id] as { entries: Array<{ parent_id: string | null }> }
    expect(tree.entries.filter((e) => e.parent_id === entry_id)).toHaveLength(3)
    expect((await state(a2.store))[session_id]).toMatchObject({ entries: tree.entries })

    await b.sync.flush()
    expect(await b.store.list({})).toStrictEqual({ sessions: [] })

    await a2.store.delete({ session_id })
    await a2.sync.flush()
    await a1.sync.flush()
    expect(await a1.store.get({ session_id })).toBeNull()
  })
})

describe('@colloquy/sync against a server that rate-limits it', () => {
  let limited: ServerProcess
  beforeAll(async () => {
    // Two requests per second, three in a burst: a device's push + pull + stream already use it up.
    limited = await startServer([
      '--memory',
      '--token',
      'alice=tok-a',
      '--requests-per-second',
      '2',
      '--request-burst',
      '3',
      '--max-batch',
      '5',
    ])
  })
  afterAll(() => limited?.stop())

  it('backs off on 429 for the Retry-After the server sent, keeps its outbox and converges afterwards', async () => {
    const seen: Array<{ at: number; status: number; retryAfter: string | null }> = []
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init)
      seen.push({ at: Date.now(), status: res.status, retryAfter: res.headers.get('retry-after') })
      return res
    }
    const open = async (): Promise<{ store: Store; sync: Sync; pending: number[] }> => {
      const store = await createStore({ storage: memoryStorage(), multiTab: false })
      // Small batches: the outbox takes several pushes, more than the burst allows.
      const sync = createSync(store, {
        url: limited.url,
        token: 'tok-a',
        fetch: counting,
        batchSize: 5,
        WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
      })
      const pending: number[] = []
      const sub = sync.status$.subscribe((s) => pending.push(s.pending))
      cleanup.push(
        () => store.close(),
        () => sync.close(),
        () => sub.unsubscribe(),
      )
      return { store, sync, pending }
    }
    const a1 = await open()
    const { session_id } = await a1.store.create({ title: 'throttled' })
    for (let i = 0; i < 12; i++) await a1.store.append({ session_id, message: user(`m${i}`) })
    a1.sync.start()
    await a1.sync.flush()

    const throttled = seen.filter((s) => s.status === 429)
    expect(throttled.length).toBeGreaterThan(0)
    for (const t of throttled) {
      expect(Number(t.retryAfter)).toBeGreaterThanOrEqual(1)
      // The next request came no sooner than the server asked.
      const next = seen.find((s) => s.at > t.at)
      if (next) expect(next.at - t.at).toBeGreaterThanOrEqual(Number(t.retryAfter) * 1000 - 50)
    }
    // The outbox was kept through the 429s: it drained only once pushes went through.
    expect(Math.max(...a1.pending)).toBeGreaterThan(5)
    expect(a1.pending.at(-1)).toBe(0)

    const a2 = await open()
    a2.sync.start()
    await a2.sync.flush()
    expect(await state(a2.store)).toStrictEqual(await state(a1.store))
    expect(((await state(a2.store))[session_id] as { entries: unknown[] }).entries).toHaveLength(12)
  })
})

describe('@colloquy/sync against a server with one WebSocket per principal', () => {
  let server1: ServerProcess
  beforeAll(async () => {
    server1 = await startServer(['--memory', '--token', 'alice=tok-a', '--max-sockets', '1'])
  })
  afterAll(() => server1?.stop())

  it('a device whose stream is refused (4429) still converges by pulling, and backs off instead of reconnecting at once', async () => {
    const open = async (counter?: { n: number }): Promise<{ store: Store; sync: Sync }> => {
      const store = await createStore({ storage: memoryStorage(), multiTab: false })
      const counting: typeof fetch = (input, init) => {
        if (counter) counter.n++
        return fetch(input, init)
      }
      const sync = createSync(store, {
        url: server1.url,
        token: 'tok-a',
        fetch: counting,
        WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
      })
      cleanup.push(
        () => store.close(),
        () => sync.close(),
      )
      sync.start()
      return { store, sync }
    }
    const a1 = await open()
    await a1.sync.flush()
    const requests = { n: 0 }
    const a2 = await open(requests)
    const { session_id } = await a1.store.create({ title: 'one socket' })
    await a1.store.append({ session_id, message: user('hello') })
    await a1.sync.flush()
    await a2.sync.flush()
    expect(await state(a2.store)).toStrictEqual(await state(a1.store))
    const before = requests.n
    await new Promise((r) => setTimeout(r, 1500))
    // Backoff after each refusal: a handful of pulls, not one per event-loop turn.
    expect(requests.n - before).toBeLessThan(8)
  })
})
