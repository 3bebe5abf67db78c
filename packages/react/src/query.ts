import type { MessageItem, SessionEntry, SessionMeta, SessionTree, Store } from '@colloquy/core'
import type { ObservableLike } from './observable-like.js'
import { queryKey } from './query-key.js'
import { sameItems } from './same-items.js'

/** How a hook turns what the source emits into what it returns, and when two results are one. */
export interface Selection<Raw, T> {
  select(raw: Raw): T
  equal(a: T, b: T): boolean
}

/** A named way to derive a hook's value; a hook makes a new one when the name changes. */
export interface Derivation<Raw, T> {
  readonly key: string
  create(): Selection<Raw, T>
}

/**
 * One live question: `owner` and `key` name it (hooks asking the same question share one
 * subscription), `open` asks it, `derive` (default: the value as is) shapes each hook's result.
 */
export interface Query<Raw, T = Raw> {
  readonly owner: object
  readonly key: string
  open(): ObservableLike<Raw>
  readonly derive?: Derivation<Raw, T>
}

export const asIs: Selection<unknown, unknown> = { select: (raw) => raw, equal: sameItems }

/** What each live query of the store emits. */
export interface LiveResults {
  session$: SessionMeta | null
  sessions$: SessionMeta[]
  messages$: MessageItem[]
  entry$: SessionEntry | null
  tree$: SessionTree | null
}

export function storeQuery<M extends keyof LiveResults, T = LiveResults[M]>(
  store: Store,
  method: M,
  args: Parameters<Store[M]>,
  derive?: Derivation<LiveResults[M], T>,
): Query<LiveResults[M], T> {
  return {
    owner: store,
    key: queryKey(method, args),
    open: () => (store[method] as (...a: unknown[]) => ObservableLike<LiveResults[M]>)(...args),
    derive,
  }
}
