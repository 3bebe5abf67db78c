import type { SearchRequest, SearchRole } from '../validation/search-request.js'
import type { Doc, InvertedIndex } from './inverted-index.js'

/** What a search request's filters keep of an index's documents. */
export interface DocFilter {
  /** Whether the request filters by session, role or time at all (a scan may skip `accepts`). */
  readonly filtered: boolean
  /** In the request's sessions, roles and time range (`from` inclusive, `to` exclusive). */
  accepts(doc: Doc): boolean
  /** On its session's active path (a title always is). */
  onPath(doc: Doc): boolean
}

/**
 * The one rule for a request's filters, shared by the device's scan (`runQuery`) and any other
 * query runner over the same index (the server's top-k read), so that both keep the same
 * documents. A session's active path is walked once, from its leaf (`leaf`, the query's text source's) up, whole (a hit's flag must
 * be right): bounded by the session's size (the walk stops at a cycle), and each walk's length is
 * handed to `walked` for the runner to charge to its work.
 */
export function docFilter(
  index: InvertedIndex,
  leaf: (sid: string) => string | null | undefined,
  request: SearchRequest,
  walked: (entries: number) => void,
): DocFilter {
  const sessions = request.session_ids && new Set(request.session_ids)
  const roles = request.roles && new Set<SearchRole>(request.roles)
  const paths = new Map<string, Set<string>>()
  const pathOf = (sid: string): Set<string> => {
    let path = paths.get(sid)
    if (path) return path
    paths.set(sid, (path = new Set()))
    const docs = index.sessions.get(sid)?.docs
    for (let id = leaf(sid) ?? null; id !== null && !path.has(id);) {
      path.add(id)
      id = docs?.get(id)?.parent ?? null
    }
    walked(path.size)
    return path
  }
  return {
    filtered: !!sessions || !!roles || request.from !== undefined || request.to !== undefined,
    accepts: (doc) =>
      (!sessions || sessions.has(doc.sid)) &&
      (!roles || roles.has(doc.role!)) &&
      (request.from === undefined || doc.ts >= request.from) &&
      (request.to === undefined || doc.ts < request.to),
    onPath: (doc) => doc.eid === null || pathOf(doc.sid).has(doc.eid),
  }
}
