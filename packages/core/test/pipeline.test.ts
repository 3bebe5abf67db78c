import 'fake-indexeddb/auto'
import { describe, expect, it, vi } from 'vitest'
import { createStore, indexedDbStorage, memoryStorage, type Storage, type Store } from '../src/index.js'
import { GATHER_MS } from '../src/engine/batches.js'
import { operations } from '../src/ops/index.js'
import { updateMessage } from '../src/recipe.js'
import { StaleHeadError, type SessionHead, type StorageReader, type WriteSet } from '../src/storage/seam.js'

// The commit path: batches built from memory, their heads checked inside the transaction
// (a stale one reruns the batch on what is on disk), and a batch started while the one
// before commits, which must never land on a state that assumed a failed batch.
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

/**
 * A storage that keeps transactions in call order (as IndexedDB does) and commits each only
 * when the test says so: the engine may hand it the next batch while one waits. Heads checked
 * with `expect` are compared at commit time, on what the memory storage underneath holds.
 */
function gatedStorage() {
  const inner = memoryStorage()
  const log: string[] = []
  const waiting: Array<() => void> = []
  let turn: Promise<unknown> = Promise.resolve()
  let issued = 0
  let failAt = 0
  const heads = async (): Promise<Map<string, SessionHead>> =>
    new Map((await inner.open()).map((h) => [h.meta.session_id, h]))
  const storage: Storage = {
    ...inner,
    name: 'gated',
    ordered: true,
    transact(work) {
      const n = ++issued
      const checks: Array<readonly [string, (disk: SessionHead | undefined) => boolean]> = []
      const reader: StorageReader = {
        head: async (id) => (await heads()).get(id),
        entries: (id) => inner.entries(id),
        expect: (id, ok) => void checks.push([id, ok]),
      }
      const ready = work(reader)
      const before = turn
      const mine = (async () => {
        const writes: WriteSet = await ready
        log.push(`issued ${n}`)
        await before.catch(() => {})
        await new Promise<void>((resolve) => waiting.push(resolve))
        if (n === failAt) {
          log.push(`failed ${n}`)
          throw new Error('QuotaExceededError')
        }
        const disk = await heads()
        for (const [id, ok] of checks) {
          if (!ok(disk.get(id))) {
            log.push(`stale ${n}`)
            throw new StaleHeadError(id)
          }
        }
        await inner.transact(async () => writes)
        log.push(`committed ${n}`)
      })()
      turn = mine
      return mine
    },
  }
  return {
    storage,
    log,
    /** Lets the oldest waiting transaction commit (or fail, or find a stale head). */
    async step(): Promise<void> {
      while (!waiting.length) await new Promise((r) => setTimeout(r, 1))
      waiting.shift()!()
      await new Promise((r) => setTimeout(r, 1))
    },
    failTransaction(n: number): void {
      failAt = n
    },
    get transactions() {
      return issued
    },
    inner,
  }
}

async function open(storage: Storage): Promise<{ store: Store; events: string[] }> {
  let n = 0
  const store = await createStore({
    storage,
    multiTab: false,
    now: () => 1_000_000,
    newId: (k) => `${k[0]}_${++n}`,
  })
  // The code of the write path is fetched on first use (first-use.test.ts): here it is in place,
  // so that what these tests count in ticks is the engine, not the fetch.
  await Promise.all(Object.values(operations).map((op) => op.load?.()))
  const events: string[] = []
  store.on('session::message-added').subscribe((p) => events.push(p.entry_id))
  return { store, events }
}

/** A store on a gated storage, with session `chat` created (the first transaction, committed). */
async function openWithChat(): Promise<{
  g: ReturnType<typeof gatedStorage>
  store: Store
  events: string[]
}> {
  const g = gatedStorage()
  const { store, events } = await open(g.storage)
  const created = store.ensure({ session_id: 'chat' })
  await g.step()
  await created
  return { g, store, events }
}

/** `openWithChat` with an empty reply appended and committed, and the revisions its updates fire. */
async function openWithReply(): Promise<{
  g: ReturnType<typeof gatedStorage>
  store: Store
  updated: number[]
}> {
  const { g, store } = await openWithChat()
  const appended = store.append({ session_id: 'chat', message: user(''), entry_id: 'reply' })
  await g.step()
  await appended
  const updated: number[] = []
  store.on('session::message-updated', { session_id: 'chat' }).subscribe((p) => updated.push(p.revision))
  return { g, store, updated }
}

const text = (t: string) => [{ type: 'text' as const, text: t }]

/**
 * Resolves once the timer the engine set for the updates gathering behind a committed batch
 * (`gathers` in engine/batches.ts) has fired. While the engine's clock stands still, the window
 * is still open when it fires and the engine sets a new one; should it start the batch instead,
 * no timer is left.
 */
async function gatheringTimerFires(store: Store): Promise<void> {
  const runner = (store.engine as unknown as { batches: { gathering: unknown } }).batches
  const timer = runner.gathering
  expect(timer).toBeDefined()
  // Polled on real timers: `vi.waitFor` would move the faked clock, closing the window.
  await until(() => runner.gathering !== timer)
  expect(runner.gathering).not.toBe(timer)
}

/**
 * The window: nothing more starts while the clock stands still, even when the engine's timer
 * fires, then the held calls go in one transaction once it has moved `GATHER_MS`; all four
 * calls answer, each firing its event.
 */
async function windowCloses(
  store: Store,
  g: ReturnType<typeof gatedStorage>,
  issued: number,
  calls: Array<Promise<unknown>>,
  updated: number[],
): Promise<void> {
  await gatheringTimerFires(store)
  expect(g.transactions).toBe(issued + 1)
  vi.advanceTimersByTime(GATHER_MS)
  await until(() => g.transactions === issued + 2)
  expect(g.transactions).toBe(issued + 2)
  await g.step()
  expect(await Promise.all(calls)).toStrictEqual(
    [1, 2, 3, 4].map((revision) => ({ updated: true, revision })),
  )
  expect(updated).toStrictEqual([1, 2, 3, 4])
}

/** Issues `first` while nothing commits (it starts at once: one transaction), then `second` behind it. */
async function startStream(
  g: ReturnType<typeof gatedStorage>,
  first: () => Promise<unknown>,
  second: () => Promise<unknown>,
): Promise<{ issued: number; calls: Array<Promise<unknown>> }> {
  const issued = g.transactions
  const calls = [first()]
  await tick()
  expect(g.transactions).toBe(issued + 1)
  calls.push(second())
  await tick()
  return { issued, calls }
}

/** Lets the engine start what was issued (its batch starts on a microtask, its transaction after). */
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0))
/** Waits until `ok` holds (at most 2 s): the engine's timers run in real time. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 2))
}

describe('pipelined commits', () => {
  it('start the next batch while one commits, and commit and emit in issue order', async () => {
    const { g, store, events } = await openWithChat()
    const settled: string[] = []
    const first = store
      .append({ session_id: 'chat', message: user('one'), entry_id: 'one' })
      .then((r) => (settled.push('one'), r))
    await tick()
    const second = store
      .append({ session_id: 'chat', message: user('two'), entry_id: 'two' })
      .then((r) => (settled.push('two'), r))
    await tick()
    // Both batches are in the storage's hands before the first one committed.
    expect(g.log.slice(-2)).toStrictEqual(['issued 2', 'issued 3'])
    expect(settled).toStrictEqual([])
    await g.step()
    await g.step()
    expect(await first).toMatchObject({ entry_id: 'one', parent_id: null })
    // Built on the first batch's draft: its parent is the entry still being committed.
    expect(await second).toMatchObject({ entry_id: 'two', parent_id: 'one' })
    expect(settled).toStrictEqual(['one', 'two'])
    expect(events).toStrictEqual(['one', 'two'])
    expect(g.log.slice(-2)).toStrictEqual(['committed 2', 'committed 3'])
    expect(store.engine.reruns).toBe(0)
    // Memory equals disk: a store opened afterwards reads the same chain.
    const again = await open(g.storage)
    expect(
      (await again.store.messages({ session_id: 'chat' })).messages.map((m) => m.entry_id),
    ).toStrictEqual(['one', 'two'])
    await store.close()
  })

  it('updates of a message the committing batch writes wait for it and land together; an append beside them does not wait', async () => {
    const { g, store, updated } = await openWithReply()
    const calls = [store.updateMessage({ session_id: 'chat', entry_id: 'reply', content: text('a') })]
    await tick()
    const issued = g.transactions
    // A reply streaming in: each token in a task of its own, while the first update commits.
    for (const t of ['ab', 'abc', 'abcd']) {
      calls.push(store.updateMessage({ session_id: 'chat', entry_id: 'reply', content: text(t) }))
      await tick()
    }
    expect(g.transactions).toBe(issued)
    expect(updated).toStrictEqual([])
    await g.step()
    await calls[0]
    // Events after the commit: only the first update's so far.
    expect(updated).toStrictEqual([1])
    await tick()
    // The three that waited went in one transaction.
    expect(g.transactions).toBe(issued + 1)
    await g.step()
    expect(await Promise.all(calls)).toStrictEqual(
      [1, 2, 3, 4].map((revision) => ({ updated: true, revision })),
    )
    expect(updated).toStrictEqual([1, 2, 3, 4])
    // An append is not a rewrite: it starts beside the update committing.
    const more = store.updateMessage({ session_id: 'chat', entry_id: 'reply', content: text('abcde') })
    await tick()
    const next = store.append({ session_id: 'chat', message: user('next'), entry_id: 'next' })
    await tick()
    expect(g.transactions).toBe(issued + 3)
    await g.step()
    await g.step()
    expect(await more).toStrictEqual({ updated: true, revision: 5 })
    expect(await next).toMatchObject({ entry_id: 'next', parent_id: 'reply' })
    const again = await open(g.storage)
    const stored = (await again.store.getMessage({ session_id: 'chat', entry_id: 'reply' }))?.entry
    expect(stored).toMatchObject({ revision: 5, message: { content: text('abcde') } })
    await store.close()
  })

  it('updates held behind a commit gather until GATHER_MS after it started, asking for no batch start each; one issued when nothing commits, or an append among them, starts at once', async () => {
    const { g, store, updated } = await openWithReply()
    const update = (t: string) =>
      store.updateMessage({ session_id: 'chat', entry_id: 'reply', content: text(t) })
    // The engine's clock stands still unless the test moves it; timers stay real.
    vi.useFakeTimers({ toFake: ['performance'] })
    try {
      const { issued, calls } = await startStream(
        g,
        () => update('a'),
        () => update('ab'),
      )
      // Held calls ask for no batch start of their own: what started the batch does it.
      const pump = vi.spyOn(store.engine as unknown as { pump(): void }, 'pump')
      calls.push(update('abc'))
      await tick()
      expect(pump).not.toHaveBeenCalled()
      await g.step()
      await calls[0]
      expect(updated).toStrictEqual([1])
      // The batch they waited for committed within the window: they wait for the rest of it,
      // even once the engine's timer fired, and what streams in meanwhile joins them.
      await gatheringTimerFires(store)
      pump.mockClear()
      calls.push(update('abcd'))
      // Microtasks only: the engine's timer cannot fire in between.
      for (let i = 0; i < 20; i++) await undefined
      expect(pump).not.toHaveBeenCalled()
      pump.mockRestore()
      expect(updated).toStrictEqual([1])
      await windowCloses(store, g, issued, calls, updated)
      // Held again behind the next update; an append arriving is not an update: the batch
      // starts at once, the held update with it, in issue order.
      const more = update('abcde')
      await tick()
      expect(g.transactions).toBe(issued + 3)
      const held = update('abcdef')
      await tick()
      await g.step()
      await more
      await tick()
      expect(g.transactions).toBe(issued + 3)
      const next = store.append({ session_id: 'chat', message: user('next'), entry_id: 'next' })
      await tick()
      expect(g.transactions).toBe(issued + 4)
      await g.step()
      expect(await held).toStrictEqual({ updated: true, revision: 6 })
      expect(await next).toMatchObject({ entry_id: 'next', parent_id: 'reply' })
      expect(updated).toStrictEqual([1, 2, 3, 4, 5, 6])
      // Memory equals disk.
      const again = await open(g.storage)
      const stored = (await again.store.getMessage({ session_id: 'chat', entry_id: 'reply' }))?.entry
      expect(stored).toMatchObject({ revision: 6, message: { content: text('abcdef') } })
    } finally {
      vi.useRealTimers()
    }
    await store.close()
  })

  it('recipe updates gather with the updates held behind a commit, in issue order', async () => {
    const { g, store, updated } = await openWithReply()
    const add = (token: string) =>
      updateMessage(store, { session_id: 'chat', entry_id: 'reply' }, (draft) => {
        const first = draft[0]
        if (first?.type === 'text') first.text += token
        else draft.push({ type: 'text', text: token })
      })
    vi.useFakeTimers({ toFake: ['performance'] })
    try {
      const { issued, calls } = await startStream(
        g,
        () => add('a'),
        () => add('b'),
      )
      await g.step()
      await calls[0]
      // Held within the window, a plain update and another token joining them.
      calls.push(
        store.updateMessage({
          session_id: 'chat',
          entry_id: 'reply',
          content: [{ type: 'text', text: 'ab!' }],
        }),
      )
      await tick()
      calls.push(add('?'))
      await windowCloses(store, g, issued, calls, updated)
      const again = await open(g.storage)
      const stored = (await again.store.getMessage({ session_id: 'chat', entry_id: 'reply' }))?.entry
      expect(stored).toMatchObject({ revision: 4, message: { content: [{ type: 'text', text: 'ab!?' }] } })
    } finally {
      vi.useRealTimers()
    }
    await store.close()
  })

  it('a failed batch does not let the batch built on it land: that one runs again on what is on disk', async () => {
    const { g, store, events } = await openWithChat()
    g.failTransaction(2)
    const first = store.append({ session_id: 'chat', message: user('lost'), entry_id: 'lost' })
    first.catch(() => {})
    await tick()
    const second = store.append({ session_id: 'chat', message: user('kept'), entry_id: 'kept' })
    await tick()
    expect(g.log.slice(-2)).toStrictEqual(['issued 2', 'issued 3'])
    await g.step() // 2 fails
    await g.step() // 3 was built on 2's draft: its check fails, nothing written
    await g.step() // 3 again, on the committed state
    await expect(first).rejects.toMatchObject({ code: 'session/storage' })
    // Not a child of the entry that never reached the disk.
    expect(await second).toMatchObject({ entry_id: 'kept', parent_id: null })
    expect(g.log.slice(-4)).toStrictEqual(['failed 2', 'stale 3', 'issued 4', 'committed 4'])
    expect(store.engine.reruns).toBe(1)
    expect(events).toStrictEqual(['kept'])
    const held = await store.get({ session_id: 'chat' })
    const disk = await (await open(g.storage)).store.get({ session_id: 'chat' })
    expect(held).toStrictEqual(disk)
    expect(disk?.meta.message_count).toBe(1)
    expect((await store.messages({ session_id: 'chat' })).messages.map((m) => m.entry_id)).toStrictEqual([
      'kept',
    ])
    await store.close()
  })

  it('a read issued after a pipelined write waits for it and sees it', async () => {
    const { g, store } = await openWithChat()
    const first = store.append({ session_id: 'chat', message: user('one'), entry_id: 'one' })
    await tick()
    const second = store.append({ session_id: 'chat', message: user('two'), entry_id: 'two' })
    await tick()
    const read = store.messages({ session_id: 'chat' })
    await g.step()
    await g.step()
    await Promise.all([first, second])
    expect((await read).messages.map((m) => m.entry_id)).toStrictEqual(['one', 'two'])
    await store.close()
  })
})

let db = 0
const shared: Array<[string, () => () => Storage]> = [
  [
    'memoryStorage',
    () => {
      const s = memoryStorage()
      return () => s
    },
  ],
  [
    'fake-indexeddb',
    () => {
      const name = `pipeline-${process.pid}-${++db}`
      return () => indexedDbStorage({ name })
    },
  ],
]

describe.each(shared)('a head changed on disk under a batch built from memory (%s)', (_, database) => {
  it('is found inside the transaction: nothing written, the batch runs again on the fresh head', async () => {
    const storage = database()
    const a = await open(storage())
    const b = await open(storage())
    await a.store.ensure({ session_id: 'chat' })
    await a.store.append({ session_id: 'chat', message: user('a1'), entry_id: 'a1' })
    // b appends behind a's back (no relay): a's memory still has a1 as the leaf.
    await b.store.append({ session_id: 'chat', message: user('b1'), entry_id: 'b1' })
    const reruns = a.store.engine.reruns
    const r = await a.store.append({ session_id: 'chat', message: user('a2'), entry_id: 'a2' })
    expect(a.store.engine.reruns).toBe(reruns + 1)
    // One chain: a2 follows b1, which a learnt of only inside its transaction.
    expect(r.parent_id).toBe('b1')
    const c = await open(storage())
    for (const s of [a.store, c.store]) {
      expect((await s.messages({ session_id: 'chat' })).messages.map((m) => m.entry_id)).toStrictEqual([
        'a1',
        'b1',
        'a2',
      ])
      expect((await s.get({ session_id: 'chat' }))?.meta.message_count).toBe(3)
    }
    expect(a.events).toStrictEqual(['a1', 'a2'])
    await Promise.all([a.store.close(), b.store.close(), c.store.close()])
  })

  it('a session created elsewhere under a store that did not know it is read, not overwritten', async () => {
    const storage = database()
    const a = await open(storage())
    const b = await open(storage())
    await b.store.ensure({ session_id: 'chat', title: 'from b' })
    await b.store.append({ session_id: 'chat', message: user('b1'), entry_id: 'b1' })
    // a expected no session at all: ensure must find b's, not create a second one.
    const ensured = await a.store.ensure({ session_id: 'chat', title: 'from a' })
    expect(ensured.created).toBe(false)
    expect(ensured.meta.title).toBe('from b')
    expect(
      (await a.store.append({ session_id: 'chat', message: user('a1'), entry_id: 'a1' })).parent_id,
    ).toBe('b1')
    await Promise.all([a.store.close(), b.store.close()])
  })
})

describe('messages$ with optimistic: true', () => {
  it('shows a local append once it is handed to the storage, then keeps the same list when it commits', async () => {
    const { g, store, events } = await openWithChat()
    const optimistic: string[][] = []
    const committed: string[][] = []
    store
      .messages$({ session_id: 'chat', optimistic: true })
      .subscribe((items) => optimistic.push(items.map((i) => i.entry_id)))
    store.messages$({ session_id: 'chat' }).subscribe((items) => committed.push(items.map((i) => i.entry_id)))
    const first = store.append({ session_id: 'chat', message: user('one'), entry_id: 'one' })
    await tick()
    const second = store.append({ session_id: 'chat', message: user('two'), entry_id: 'two' })
    await tick()
    // Nothing committed yet: only the optimistic query shows the two writes in flight.
    expect(optimistic).toStrictEqual([[], ['one'], ['one', 'two']])
    expect(committed).toStrictEqual([[]])
    expect(events).toStrictEqual([])
    await g.step()
    await g.step()
    await Promise.all([first, second])
    expect(committed).toStrictEqual([[], ['one'], ['one', 'two']])
    // The commits change nothing it showed: no emission of an equal list.
    expect(optimistic).toStrictEqual([[], ['one'], ['one', 'two']])
    expect(events).toStrictEqual(['one', 'two'])
    await store.close()
  })

  it('takes a write back when its commit fails, and shows the batch built on it once it ran again', async () => {
    const { g, store } = await openWithChat()
    const optimistic: string[][] = []
    store
      .messages$({ session_id: 'chat', optimistic: true })
      .subscribe((items) => optimistic.push(items.map((i) => i.entry_id)))
    g.failTransaction(2)
    const lost = store.append({ session_id: 'chat', message: user('lost'), entry_id: 'lost' })
    lost.catch(() => {})
    await tick()
    const kept = store.append({ session_id: 'chat', message: user('kept'), entry_id: 'kept' })
    await tick()
    expect(optimistic.at(-1)).toStrictEqual(['lost', 'kept'])
    await g.step()
    await g.step()
    await g.step()
    await expect(lost).rejects.toMatchObject({ code: 'session/storage' })
    await kept
    // Taken back with the failure, then the rerun's write (no longer after `lost`).
    expect(optimistic.slice(-2)).toStrictEqual([[], ['kept']])
    expect((await store.messages({ session_id: 'chat' })).messages.map((m) => m.entry_id)).toStrictEqual([
      'kept',
    ])
    await store.close()
  })
})

describe('messages$ (default: after the commit)', () => {
  it('a subscriber of one session is not woken by commits to another, and emits once per commit to its own, after it commits', async () => {
    const g = gatedStorage()
    const { store } = await open(g.storage)
    const made = [store.ensure({ session_id: 'a' }), store.ensure({ session_id: 'b' })]
    await g.step()
    await Promise.all(made)
    const seen: string[][] = []
    store.messages$({ session_id: 'a' }).subscribe((items) => seen.push(items.map((i) => i.entry_id)))
    await tick()
    expect(seen).toStrictEqual([[]])
    const toB = store.append({ session_id: 'b', message: user('b1'), entry_id: 'b1' })
    await tick()
    await g.step()
    await toB
    expect(seen).toStrictEqual([[]])
    const toA = store.append({ session_id: 'a', message: user('a1'), entry_id: 'a1' })
    await tick()
    // Handed to the storage, not committed: nothing shown yet.
    expect(g.log.at(-1)).toMatch(/^issued/)
    expect(seen).toStrictEqual([[]])
    await g.step()
    await toA
    expect(seen).toStrictEqual([[], ['a1']])
    // Streamed into: one emission per commit, and none for a commit to the other session.
    const updates = [
      store.updateMessage({ session_id: 'a', entry_id: 'a1', content: [{ type: 'text', text: 'x' }] }),
    ]
    await tick()
    updates.push(
      store.updateMessage({ session_id: 'a', entry_id: 'a1', content: [{ type: 'text', text: 'xy' }] }),
    )
    updates.push(
      store.updateMessage({ session_id: 'a', entry_id: 'a1', content: [{ type: 'text', text: 'xyz' }] }),
    )
    const alsoB = store.append({ session_id: 'b', message: user('b2'), entry_id: 'b2' })
    await tick()
    expect(seen).toHaveLength(2)
    const before = g.transactions
    await g.step()
    await updates[0]
    expect(seen.map((s) => s.join())).toStrictEqual(['', 'a1', 'a1'])
    // The two later updates and b's append were issued together: one commit, one emission for a.
    await g.step()
    await Promise.all([...updates, alsoB])
    expect(g.transactions).toBe(before)
    expect(seen.map((s) => s.join())).toStrictEqual(['', 'a1', 'a1', 'a1'])
    await store.close()
  })
})
