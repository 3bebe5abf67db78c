import { useMemo, useRef, useSyncExternalStore } from 'react'
import { LOADING, ready, type LiveState } from './live-state.js'
import { asIs, type Query, type Selection } from './query.js'
import { listen, read } from './shared-query.js'

interface Binding<T> {
  subscribe(onChange: () => void): () => void
  getSnapshot(): LiveState<T>
}

const idle: Binding<never> = { subscribe: () => () => {}, getSnapshot: () => LOADING }

// Server rendering and hydration show the loading state: the server has no store data to
// agree with, and the server never opens a subscription (nor IndexedDB).
const serverSnapshot = (): LiveState<never> => LOADING

/**
 * The hook under all others: `useSyncExternalStore` over a shared query, returning a snapshot
 * whose identity changes only when the selected value really changed. A new binding is made
 * only when the query's owner or keys change, so arguments are compared by value.
 */
export function useLive<Raw, T = Raw>(query: Query<Raw, T> | null): LiveState<T> {
  // The last result outlives a binding: a new key that yields an equal value keeps identity.
  const last = useRef<LiveState<T>>(LOADING)
  const binding = useMemo(() => (query ? bind(query, last) : idle), [query?.owner, query?.key, query?.derive?.key])
  return useSyncExternalStore(binding.subscribe, binding.getSnapshot, serverSnapshot)
}

function bind<Raw, T>(query: Query<Raw, T>, last: { current: LiveState<T> }): Binding<T> {
  const selection = (query.derive?.create() ?? asIs) as Selection<Raw, T>
  let lastRaw: LiveState<Raw> | undefined
  // Before subscribing, the read taken for render is kept so that React's repeated
  // getSnapshot calls agree; once subscribed the shared subscription is the truth.
  let subscribed = false
  let early: LiveState<Raw> | undefined

  const derive = (raw: LiveState<Raw>): LiveState<T> => {
    if (raw === lastRaw) return last.current
    lastRaw = raw
    const prev = last.current
    let next: LiveState<T>
    if (raw.status !== 'ready') next = raw as LiveState<never>
    else {
      const data = selection.select(raw.data)
      next = prev.status === 'ready' && selection.equal(prev.data, data) ? prev : ready(data)
    }
    return (last.current = next)
  }

  return {
    subscribe(onChange) {
      subscribed = true
      early = undefined
      const leave = listen(query, onChange)
      return () => {
        subscribed = false
        leave()
      }
    },
    getSnapshot: () => derive(subscribed ? read(query) : (early ??= read(query))),
  }
}
