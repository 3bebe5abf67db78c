import {
  createStore,
  indexedDbStorage,
  memoryStorage,
  type AgentMessage,
  type SessionEntry,
  type Store,
} from '@colloquy/core'
import type { ObservableLike } from '@colloquy/kit'

// Session fixtures for the bindings' tests: packages/react and packages/vue (framework-neutral).

/** A store in memory with a deterministic clock, so "newest" in branch tests is exact. */
export async function memoryStore(): Promise<Store> {
  let clock = 1_000_000
  return createStore({ storage: memoryStorage(), multiTab: false, now: () => ++clock })
}

export const user = (text: string): AgentMessage => ({
  role: 'user',
  content: [{ type: 'text', text }],
  timestamp: 1,
})

export const assistant = (text: string): AgentMessage => ({
  role: 'assistant',
  content: text ? [{ type: 'text', text }] : [],
  stop_reason: 'end',
  model: 'm',
  provider: 'p',
  timestamp: 1,
})

/** The text of a message entry, as rows render it. */
export function textOf(entry: SessionEntry | null | undefined): string {
  if (!entry || entry.kind !== 'message') return ''
  return entry.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
}

/** A session holding `count` alternating user / assistant messages; returns their ids. */
export async function seedSession(
  store: Store,
  count: number,
  title = 'chat',
): Promise<{ session_id: string; ids: string[] }> {
  const { session_id } = await store.create({ title })
  const messages = Array.from({ length: count }, (_, i) => (i % 2 === 0 ? user(`q${i}`) : assistant(`a${i}`)))
  const { entry_ids } = await store.appendMany({ session_id, messages })
  return { session_id, ids: entry_ids }
}

/**
 * q0 ─┬─ a1 ─┬─ q2 ── a3
 *     │      └─ q2x            (appended last: the newest leaf under a1)
 *     └─ a1b ── q2b ── a3b     (active)
 */
export async function branchedSession(store: Store) {
  const { session_id } = await store.create({})
  const [q0, a1, q2, a3] = (
    await store.appendMany({
      session_id,
      messages: [user('q0'), assistant('a1'), user('q2'), assistant('a3')],
    })
  ).entry_ids
  const a1b = (await store.append({ session_id, parent_id: q0, message: assistant('a1b') })).entry_id
  const q2b = (await store.append({ session_id, message: user('q2b') })).entry_id
  const a3b = (await store.append({ session_id, message: assistant('a3b') })).entry_id
  const q2x = (await store.append({ session_id, parent_id: a1, message: user('q2x') })).entry_id
  await store.setActiveLeaf({ session_id, entry_id: a3b })
  return { session_id, q0, a1, q2, a3, a1b, q2b, a3b, q2x }
}

/**
 * A session of `count` messages (as `seedSession`) written to a new IndexedDB database named
 * `<prefix>-<uuid>` by a store that is then closed. `reopen()` opens another store over it: one
 * that knows the session's meta but has not read its entries yet. Delete `name` when done.
 */
export async function seedIndexedDb(
  prefix: string,
  count: number,
): Promise<{ name: string; session_id: string; ids: string[]; reopen: () => Promise<Store> }> {
  const name = `${prefix}-${crypto.randomUUID()}`
  const writer = await createStore({ storage: indexedDbStorage({ name }), multiTab: false })
  const { session_id, ids } = await seedSession(writer, count)
  await writer.close()
  return {
    name,
    session_id,
    ids,
    reopen: () => createStore({ storage: indexedDbStorage({ name }), multiTab: false }),
  }
}

/** A hand-driven observable: what a sync client's `status$` looks like to the hooks and composables. */
export function subject<T>(): ObservableLike<T> & {
  next(v: T): void
  fail(e: unknown): void
  readonly observers: number
} {
  const observers = new Set<{ next: (v: T) => void; error: (e: unknown) => void }>()
  return {
    get observers() {
      return observers.size
    },
    next: (v) => observers.forEach((o) => o.next(v)),
    fail: (e) => observers.forEach((o) => o.error(e)),
    subscribe(o) {
      observers.add(o)
      return { unsubscribe: () => void observers.delete(o) }
    },
  }
}

type LiveMethod = 'session$' | 'sessions$' | 'messages$' | 'entry$' | 'tree$' | 'branch$' | 'commits$'

/**
 * Wraps the store's live queries (and its commit stream) to count their subscriptions: what a
 * resubscribe loop, a leak after unmount or a missed sharing would show.
 */
export function countSubscriptions(store: Store): {
  open: (method?: LiveMethod) => number
  opened: (method?: LiveMethod) => number
} {
  const open = new Map<LiveMethod, number>()
  const opened = new Map<LiveMethod, number>()
  const bump = (m: Map<LiveMethod, number>, k: LiveMethod, d: number): void =>
    void m.set(k, (m.get(k) ?? 0) + d)
  const sum = (m: Map<LiveMethod, number>, k?: LiveMethod): number =>
    k ? (m.get(k) ?? 0) : [...m.values()].reduce((a, b) => a + b, 0)
  type Source = { subscribe(o: unknown): { unsubscribe(): void } }
  const counted = (method: LiveMethod, source: Source): Source => ({
    subscribe(observer) {
      bump(open, method, 1)
      bump(opened, method, 1)
      const sub = source.subscribe(observer)
      let closed = false
      return {
        unsubscribe() {
          if (!closed) bump(open, method, -1)
          closed = true
          sub.unsubscribe()
        },
      }
    },
  })
  for (const method of ['session$', 'sessions$', 'messages$', 'entry$', 'tree$', 'branch$'] as const) {
    const original = store[method].bind(store) as (...args: unknown[]) => Source
    ;(store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) =>
      counted(method, original(...args))
  }
  Object.defineProperty(store, 'commits$', { value: counted('commits$', store.commits$ as never) })
  return { open: (m) => sum(open, m), opened: (m) => sum(opened, m) }
}
