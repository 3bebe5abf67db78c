import type { ObservableLike } from './observable-like.js'
import { sameItems } from './same-items.js'

/** How a binding turns what the source emits into what it returns, and when two results are one. */
export interface Selection<Raw, T> {
  select(raw: Raw): T
  equal(a: T, b: T): boolean
}

/** A named way to derive a binding's value; a binding makes a new one when the name changes. */
export interface Derivation<Raw, T> {
  readonly key: string
  create(): Selection<Raw, T>
}

/**
 * One live question: `owner` and `key` name it (bindings asking the same question share one
 * subscription), `open` asks it, `derive` (default: the value as is) shapes each binding's result.
 */
export interface Query<Raw, T = Raw> {
  readonly owner: object
  readonly key: string
  open(): ObservableLike<Raw>
  readonly derive?: Derivation<Raw, T>
}

export const asIs: Selection<unknown, unknown> = { select: (raw) => raw, equal: sameItems }
