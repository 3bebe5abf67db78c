import { metadataMatches } from '../model/json.js'
import type { ListRequest, SessionMeta } from '../model/model.js'
import { compareFor, sortKey } from '../model/order.js'

export { compareFor, sortKey } from '../model/order.js'

/** Whether a session passes the filters of a list request (status, kinds, metadata). */
export const passesFilters = (m: SessionMeta, req: Omit<ListRequest, 'cursor' | 'limit'>): boolean =>
  (req.status == null || m.status === req.status) &&
  (req.kinds == null || req.kinds.includes(m.kind)) &&
  metadataMatches(req.metadata, m.metadata)

/** The filters and order of `session::list` (shared with the live `sessions$`). */
export function selectSessions(
  metas: Iterable<SessionMeta>,
  req: Omit<ListRequest, 'cursor' | 'limit'>,
): SessionMeta[] {
  const order = req.order ?? 'updated_desc'
  const cmp = compareFor(order)
  const out: SessionMeta[] = []
  for (const m of metas) if (passesFilters(m, req)) out.push(m)
  return out.sort((a, b) =>
    cmp({ k: sortKey(a, order), id: a.session_id }, { k: sortKey(b, order), id: b.session_id }),
  )
}
