import { metadataMatches } from '../model/json.js'
import type { ListOrder, ListRequest, SessionMeta } from '../model/model.js'

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

/** The filters and order of `session::list` (shared with the live `sessions$`). */
export function selectSessions(
  metas: Iterable<SessionMeta>,
  req: Omit<ListRequest, 'cursor' | 'limit'>,
): SessionMeta[] {
  const order = req.order ?? 'updated_desc'
  const cmp = compareFor(order)
  const out: SessionMeta[] = []
  for (const m of metas) {
    if (req.status != null && m.status !== req.status) continue
    if (req.kinds != null && !req.kinds.includes(m.kind)) continue
    if (!metadataMatches(req.metadata, m.metadata)) continue
    out.push(m)
  }
  return out.sort((a, b) =>
    cmp({ k: sortKey(a, order), id: a.session_id }, { k: sortKey(b, order), id: b.session_id }),
  )
}
