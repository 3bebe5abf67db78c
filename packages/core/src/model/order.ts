import type { ListOrder, SessionMeta } from './model.js'

// The contract's list orders (`session::list`, section 2.4), written once: the list, the live
// list and every storage that pages sessions (memory; IndexedDB's indexes are checked against it).

export const sortKey = (meta: SessionMeta, order: ListOrder): number =>
  order === 'updated_desc' ? meta.updated_at : meta.created_at

/**
 * Comparator for an order: `(key, session_id)` ascending for created_asc; the desc orders reverse
 * the whole tuple, so timestamp ties break by session_id descending there.
 */
export function compareFor(
  order: ListOrder,
): (a: { k: number; id: string }, b: { k: number; id: string }) => number {
  const sign = order === 'created_asc' ? 1 : -1
  return (a, b) => sign * (a.k - b.k || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

/** A meta's position in an order: what a keyset cursor holds. */
export const positionOf = (meta: SessionMeta, order: ListOrder): { k: number; id: string } => ({
  k: sortKey(meta, order),
  id: meta.session_id,
})
