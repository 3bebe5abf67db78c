import { createStore, memoryStorage, type AgentMessage, type SessionEntry, type Store } from '@colloquy/core'

/** A store in memory with a deterministic clock, so "newest" in branch tests is exact. */
export async function memoryStore(): Promise<Store> {
  let clock = 1_000_000
  return createStore({ storage: memoryStorage(), multiTab: false, now: () => ++clock })
}

export const user = (text: string): AgentMessage => ({ role: 'user', content: [{ type: 'text', text }], timestamp: 1 })

export const assistant = (text: string): AgentMessage => ({
  role: 'assistant', content: text ? [{ type: 'text', text }] : [], stop_reason: 'end', model: 'm', provider: 'p', timestamp: 1,
})

/** The text of a message entry, as rows render it. */
export function textOf(entry: SessionEntry | null | undefined): string {
  if (!entry || entry.kind !== 'message') return ''
  return entry.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
}

/** A session holding `count` alternating user / assistant messages; returns their ids. */
export async function seedSession(store: Store, count: number, title = 'chat'): Promise<{ session_id: string; ids: string[] }> {
  const { session_id } = await store.create({ title })
  const messages = Array.from({ length: count }, (_, i) => (i % 2 === 0 ? user(`q${i}`) : assistant(`a${i}`)))
  const { entry_ids } = await store.appendMany({ session_id, messages })
  return { session_id, ids: entry_ids }
}

/**
 * Wraps the store's live queries to count open subscriptions: what a resubscribe loop or a
 * leak after unmount would show.
 */
export function countSubscriptions(store: Store): { open: () => number; opened: () => number } {
  let open = 0
  let opened = 0
  for (const method of ['session$', 'sessions$', 'messages$', 'entry$', 'tree$'] as const) {
    const original = store[method].bind(store) as (...args: unknown[]) => ReturnType<Store[typeof method]>
    ;(store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      const source = original(...args)
      return {
        subscribe(observer: { next(value: unknown): void; error(error: unknown): void }) {
          open++
          opened++
          const sub = (source as { subscribe(o: typeof observer): { unsubscribe(): void } }).subscribe(observer)
          let closed = false
          return {
            unsubscribe() {
              if (!closed) open--
              closed = true
              sub.unsubscribe()
            },
          }
        },
      }
    }
  }
  return { open: () => open, opened: () => opened }
}
