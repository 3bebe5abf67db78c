import type { ObservableLike } from './observable-like.js'

/**
 * A live query that is read again only when `watch` says it may have changed. The first value
 * comes from a real subscription, kept until it emits (it also loads a session's entries and
 * reports a failed load); after that each wake is one synchronous read, and one that finds the
 * entries still loading waits for the wake their load brings.
 */
export function readOnWake<T>(open: () => ObservableLike<T>, watch: (wake: () => void) => () => void): ObservableLike<T> {
  return {
    subscribe(observer) {
      let settled = false
      let first: { unsubscribe(): void } | undefined
      first = open().subscribe({
        next(value) {
          settled = true
          first?.unsubscribe()
          observer.next(value)
        },
        error: (e) => observer.error(e),
      })
      if (settled) first.unsubscribe()
      const stop = watch(() => {
        if (!settled) return
        open().subscribe({ next: (value) => observer.next(value), error: () => {} }).unsubscribe()
      })
      return {
        unsubscribe() {
          first?.unsubscribe()
          stop()
        },
      }
    },
  }
}
