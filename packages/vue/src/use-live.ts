import {
  getCurrentInstance,
  getCurrentScope,
  inject,
  onMounted,
  onScopeDispose,
  shallowReadonly,
  shallowRef,
  ssrContextKey,
  watch,
  type ShallowRef,
} from 'vue'
import { deriver, LOADING, type LiveState, type Query, listen, read } from '@colloquy/kit'

/** What every composable returns: a read-only shallow ref of the state. */
export type LiveRef<T> = Readonly<ShallowRef<LiveState<T>>>

/** Inside a component rendered by `renderToString`: the composables stay loading there. */
function onServer(): boolean {
  return getCurrentInstance() !== null && inject(ssrContextKey, null) != null
}

/** Hydrating server markup: the component's element already exists before its first render. */
function hydrating(): boolean {
  return getCurrentInstance()?.vnode.el != null
}

/**
 * The composable under all others. `query` is read in a watcher, so the refs and getters it
 * reads re-subscribe when they change, but only if the question changed by value (owner and
 * keys); the subscription ends with the calling scope. `idle` is the state without a query.
 */
export function useLive<Raw, T = Raw>(
  query: () => Query<Raw, T> | null,
  idle: LiveState<T> = LOADING,
): LiveRef<T> {
  const state = shallowRef<LiveState<T>>(LOADING)
  if (onServer()) {
    if (!query()) state.value = idle
    return shallowReadonly(state)
  }
  // The last result outlives a subscription: a new key that yields an equal value keeps identity.
  const last = { current: LOADING as LiveState<T> }
  let active: { query: Query<Raw, T>; leave: () => void } | undefined
  const same = (a: Query<Raw, T>, b: Query<Raw, T>): boolean =>
    a.owner === b.owner && a.key === b.key && a.derive?.key === b.derive?.key

  const start = (): void =>
    void watch(
      query,
      (next) => {
        if (next && active && same(next, active.query)) return
        active?.leave()
        active = undefined
        if (!next) {
          state.value = last.current = idle
          return
        }
        const derive = deriver(next, last)
        const update = (): void => void (state.value = derive(read(next)))
        active = { query: next, leave: listen(next, update) }
        update()
      },
      { immediate: true, flush: 'sync' },
    )
  // Hydration renders what the server rendered (loading) and goes live once mounted.
  if (hydrating()) onMounted(start)
  else start()
  if (getCurrentScope()) onScopeDispose(() => active?.leave())
  return shallowReadonly(state)
}
