import type { MentionItem, MentionSearchRequest, Store } from '@colloquy/core'
import type { ObservableLike } from './observable-like.js'

/**
 * Mention search as a live source: searched again whenever any session changes (a rename, a new
 * chat), answers of an older search never overwrite a newer one. An "@" picker binds to it.
 */
export function mentions$(store: Store, request: MentionSearchRequest): ObservableLike<MentionItem[]> {
  return {
    subscribe(observer) {
      let asked = 0
      let closed = false
      const search = (): void => {
        const ticket = ++asked
        store.mentionSearch(request).then(
          (res) => !closed && ticket === asked && observer.next(res.items),
          (e: unknown) => !closed && ticket === asked && observer.error(e),
        )
      }
      const sub = store.sessions$({}).subscribe({ next: search, error: (e) => observer.error(e) })
      return {
        unsubscribe() {
          closed = true
          sub.unsubscribe()
        },
      }
    },
  }
}
