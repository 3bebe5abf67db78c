import { useMemo, useRef, useSyncExternalStore } from 'react'
import { deriver, LOADING, type LiveState, type Query, listen, read } from '@colloquy/kit'

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
  // Not `query` itself: callers build it in render, a new object every time. Its `owner` and
  // `key` name the question and `derive.key` names the derivation (see `Query` in the kit), so
  // a query equal in those asks the same thing and keeps the binding (and its subscription).
  // `last` is a ref: the same object on every render.
  const binding = useMemo(
    () => (query ? bind(query, last) : idle),
    // Keyed by those three by design (above): `query` itself is new on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [query?.owner, query?.key, query?.derive?.key],
  )
  return useSyncExternalStore(binding.subscribe, binding.getSnapshot, serverSnapshot)
}

function bind<Raw, T>(query: Query<Raw, T>, last: { current: LiveState<T> }): Binding<T> {
  const derive = deriver(query, last)
  // Before subscribing, the read taken for render is kept so that React's repeated
  // getSnapshot calls agree; once subscribed the shared subscription is the truth.
  let subscribed = false
  let early: LiveState<Raw> | undefined
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
