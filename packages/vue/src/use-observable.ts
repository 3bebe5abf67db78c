import {
  shallowReadonly,
  shallowRef,
  toRaw,
  toValue,
  watch,
  type MaybeRefOrGetter,
  type ShallowRef,
} from 'vue'
import { type ObservableLike, observableQuery } from '@colloquy/kit'
import { useLive } from './use-live.js'

/**
 * Any observable's latest value: `initial` until it first emits (and on the server). Scopes
 * passing the same observable object share one subscription. An error goes to Vue's error
 * handling (`onErrorCaptured`, `app.config.errorHandler`), as a watcher's error does.
 */
export function useObservable<T, I = T>(
  observable$: MaybeRefOrGetter<ObservableLike<T> | null | undefined>,
  initial: I,
): Readonly<ShallowRef<T | I>> {
  const state = useLive(() => {
    const source = toRaw(toValue(observable$))
    return source ? observableQuery(source) : null
  })
  const value = shallowRef<T | I>(initial)
  watch(
    state,
    (s) =>
      void (value.value = s.status === 'ready' ? s.data : s.status === 'loading' ? initial : value.value),
    { immediate: true, flush: 'sync' },
  )
  watch(state, (s) => {
    if (s.status === 'error') throw s.error
  })
  return shallowReadonly(value)
}
