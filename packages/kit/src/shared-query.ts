import { failed, LOADING, ready, type LiveState } from './live-state.js'
import type { Query } from './query.js'
import { sameItems } from './same-items.js'

/** One upstream subscription shared by every live binding (hook, composable) asking the same question. */
interface Connection {
  state: LiveState<unknown>
  readonly listeners: Set<() => void>
  upstream?: { unsubscribe(): void }
}

const connections = new WeakMap<object, Map<string, Connection>>()

/**
 * Reads taken before a binding subscribes (a React render). They hold only within one synchronous
 * block: the store changes only in async callbacks, so until the next microtask a read is
 * still true, and the thousand rows of a first render asking one question read it once.
 */
const peeks = new Map<object, Map<string, LiveState<unknown>>>()

function open<Raw>(
  query: Query<Raw, unknown>,
  onState: (state: LiveState<Raw>) => void,
): { unsubscribe(): void } {
  try {
    return query
      .open()
      .subscribe({ next: (value) => onState(ready(value)), error: (error) => onState(failed(error)) })
  } catch (error) {
    onState(failed(error))
    return { unsubscribe() {} }
  }
}

const connectionOf = (query: Query<unknown, unknown>): Connection | undefined =>
  connections.get(query.owner)?.get(query.key)

/** The current value: the shared subscription's when one is open, else a synchronous read. */
export function read<Raw>(query: Query<Raw, unknown>): LiveState<Raw> {
  const live = connectionOf(query)
  if (live) return live.state as LiveState<Raw>
  const cached = peeks.get(query.owner)?.get(query.key)
  if (cached) return cached as LiveState<Raw>
  let state: LiveState<Raw> = LOADING
  open(query, (s) => void (state = s)).unsubscribe()
  if (peeks.size === 0) queueMicrotask(() => peeks.clear())
  let byKey = peeks.get(query.owner)
  if (!byKey) peeks.set(query.owner, (byKey = new Map()))
  byKey.set(query.key, state)
  return state
}

/** Joins (or opens) the shared subscription; `listener` hears every real change. */
export function listen(query: Query<unknown, unknown>, listener: () => void): () => void {
  let byKey = connections.get(query.owner)
  if (!byKey) connections.set(query.owner, (byKey = new Map()))
  let connection = byKey.get(query.key)
  if (!connection) {
    const c: Connection = { state: LOADING, listeners: new Set() }
    byKey.set(query.key, (connection = c))
    c.upstream = open(query, (next) => {
      if (next.status === 'ready' && c.state.status === 'ready' && sameItems(c.state.data, next.data)) return
      c.state = next
      for (const l of [...c.listeners]) l()
    })
  }
  const c = connection
  const map = byKey
  c.listeners.add(listener)
  let joined = true
  return () => {
    if (!joined) return
    joined = false
    c.listeners.delete(listener)
    if (c.listeners.size > 0) return
    c.upstream?.unsubscribe()
    if (map.get(query.key) === c) map.delete(query.key)
  }
}
