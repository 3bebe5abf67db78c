import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { firstValueFrom } from 'rxjs'
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
    const seen: Array<{ at: number; status: number; retryAfter: string | null; retryAfterMs?: unknown }> = []
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init)
      const body = res.status === 429 ? ((await res.clone().json()) as { retry_after_ms?: unknown }) : {}
      seen.push({
        at: Date.now(),
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        retryAfterMs: body.retry_after_ms,
      })
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
      // The body says it in ms (the header rounds it up to whole seconds).
      expect(t.retryAfterMs).toBeGreaterThan(0)
      expect(t.retryAfterMs).toBeLessThanOrEqual(Number(t.retryAfter) * 1000)
      // The next request came no sooner than the server asked.
      const next = seen.find((s) => s.at > t.at)
      if (next) expect(next.at - t.at).toBeGreaterThanOrEqual((t.retryAfterMs as number) - 50)
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

describe('@colloquy/sync against a server that refuses large pushes (413)', () => {
  const LIMIT = 8192
  let small: ServerProcess
  beforeAll(async () => {
    small = await startServer(['--memory', '--token', 'alice=tok-a', '--max-body-bytes', String(LIMIT)])
  })
  afterAll(() => small?.stop())

  /** A device whose pushes (status and body size, in order) are recorded. */
  const open = async (): Promise<{
    store: Store
    sync: Sync
    pushes: Array<{ status: number; bytes: number; mutations: number }>
  }> => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const pushes: Array<{ status: number; bytes: number; mutations: number }> = []
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init)
      if (String(input).endsWith('/sync/push')) {
        const body = String(init?.body)
        pushes.push({
          status: res.status,
          bytes: Buffer.byteLength(body),
          mutations: (JSON.parse(body) as { mutations: unknown[] }).mutations.length,
        })
      }
      return res
    }
    const sync = createSync(store, {
      url: small.url,
      token: 'tok-a',
      fetch: recording,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    })
    cleanup.push(
      () => store.close(),
      () => sync.close(),
    )
    return { store, sync, pushes }
  }

  it('splits a refused push into smaller ones in outbox order (parents first), keeps the smaller size, and converges', async () => {
    const a1 = await open()
    const { session_id } = await a1.store.create({ title: 'long' })
    // One chain of 40 messages of ~400 characters: about 25 KB in one push, three times the limit.
    let parent: string | undefined
    for (let i = 0; i < 40; i++)
      parent = (await a1.store.append({ session_id, message: user(`m${i} ${'x'.repeat(400)}`) })).entry_id
    a1.sync.start()
    await a1.sync.flush()

    expect(a1.pushes[0]).toMatchObject({ status: 413 })
    // Every push the server took fitted; once one fitted, none was refused again.
    const taken = a1.pushes.filter((p) => p.status === 200)
    expect(taken.length).toBeGreaterThan(1)
    for (const p of taken) expect(p.bytes).toBeLessThanOrEqual(LIMIT)
    const firstTaken = a1.pushes.findIndex((p) => p.status === 200)
    expect(a1.pushes.slice(firstTaken).every((p) => p.status === 200)).toBe(true)
    // Nothing refused: each message reached the server after its parent.
    expect(await a1.sync.rejections()).toEqual([])
    expect((await firstValueFrom(a1.sync.status$)).pending).toBe(0)

    const a2 = await open()
    a2.sync.start()
    await a2.sync.flush()
    expect(await state(a2.store)).toStrictEqual(await state(a1.store))
    const copy = (await state(a2.store))[session_id] as { leaf: string; entries: unknown[] }
    expect(copy.entries).toHaveLength(40)
    expect(copy.leaf).toBe(parent)
  })

  it('a single change too large for the server on its own is rejected for good (kept until acknowledged), not retried forever', async () => {
    const a1 = await open()
    const { session_id } = await a1.store.create({ title: 'one too large' })
    a1.sync.start()
    await a1.sync.flush()
    const refused: string[] = []
    const sub = a1.sync.rejected$.subscribe((r) => refused.push(r.code))
    cleanup.push(() => sub.unsubscribe())
    const big = await a1.store.append({ session_id, message: user('y'.repeat(LIMIT * 2)) })
    await a1.sync.flush()
    // The message, then the leaf move naming it (the server has no such entry).
    expect(refused).toEqual(['session/invalid_request', 'session/entry_not_found'])
    const [rejection, leaf] = await a1.sync.rejections()
    expect(rejection.change).toMatchObject({ type: 'entry', entry: { id: big.entry_id } })
    expect(rejection.message).toMatch(/too large/)
    expect(leaf.change).toMatchObject({ type: 'leaf', entry_id: big.entry_id })
    // Sent once alone, refused, not sent again.
    expect(a1.pushes.filter((p) => p.status === 413 && p.mutations === 1)).toHaveLength(1)
    expect((await firstValueFrom(a1.sync.status$)).pending).toBe(0)
  })
})

describe('@colloquy/sync against an unavailable server that says when to come back (503, retry_after_ms)', () => {
  it('waits the retry_after_ms of a 503 answer (no Retry-After header) before pushing again, then converges', async () => {
    const pushes: number[] = []
    let refuse = true
    // The server answers, but the first push meets a 503 as the server's storage failures are
    // answered, with how long to wait in the body only.
    const unavailable: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/sync/push')) {
        pushes.push(Date.now())
        if (refuse) {
          refuse = false
          return new Response(
            JSON.stringify({
              error: { code: 'session/storage', message: 'session/storage: try later' },
              retry_after_ms: 1500,
            }),
            { status: 503, headers: { 'content-type': 'application/json' } },
          )
        }
      }
      return fetch(input, init)
    }
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const sync = createSync(store, {
      url: server.url,
      token: 'tok-a',
      fetch: unavailable,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    })
    cleanup.push(
      () => store.close(),
      () => sync.close(),
    )
    const { session_id } = await store.create({ title: 'later' })
    await store.append({ session_id, message: user('hello') })
    sync.start()
    await sync.flush()
    expect(pushes.length).toBeGreaterThanOrEqual(2)
    // Without the body's figure this would be the first backoff step (250-500 ms).
    expect(pushes[1] - pushes[0]).toBeGreaterThanOrEqual(1500)
    expect((await firstValueFrom(sync.status$)).pending).toBe(0)
  })
})
