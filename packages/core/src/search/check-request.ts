import { parseSearchRequest, type SearchRequest } from '../validation/search-request.js'
import { parseQuery } from './parse-query.js'

/**
 * A search request checked whole, before any work: its fields (`parseSearchRequest`) and its
 * query's terms (at most `SEARCH_LIMITS.terms` after tokenizing). Throws `session/invalid_request`.
 */
export function checkSearchRequest(request: unknown): SearchRequest {
  const req = parseSearchRequest(request)
  parseQuery(req.query, req.prefix)
  return req
}
