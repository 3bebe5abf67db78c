import { type ObservableLike, observableQuery } from '@colloquy/kit'
import { useLive } from './use-live.js'

/**
 * Any observable's latest value: `initial` until it first emits (and on the server). Components
 * passing the same observable object share one subscription; pass a stable one (from
 * `useMemo` or module scope), since a new observable object is a new question. An error is
 * thrown during render, to the nearest error boundary.
 */
export function useObservable<T, I = T>(
  observable$: ObservableLike<T> | null | undefined,
  initial: I,
): T | I {
  const state = useLive(observable$ ? observableQuery(observable$) : null)
  if (state.status === 'error') throw state.error
  return state.status === 'ready' ? state.data : initial
}
