import { invalid } from '../model/errors.js'
import { SEARCH_LIMITS, type SearchRole } from '../validation/search-request.js'
import type { SearchHit, SearchResult } from './hit.js'
import { rankOrder, type RankKey } from './rank-order.js'

const ROLES = new Set<SearchRole>(['user', 'assistant', 'function_result', 'custom', 'title'])

const keyOf = (h: SearchHit): RankKey => ({ ts: h.timestamp, sid: h.session_id, eid: h.entry_id })
export const hitOrder = (a: SearchHit, b: SearchHit): number =>
  rankOrder(a.score, keyOf(a), b.score, keyOf(b))

/**
 * Answers from several indexes as one: a hit found by more than one (the same session and
 * entry, or the same session's title) is kept once, from the first answer that has it (the
 * device's own copy when that answer is given first); then `hitOrder`, cut to `limit`.
 * `incomplete` when any answer was.
 */
export function mergeResults(results: readonly SearchResult[], limit: number): SearchResult {
  const seen = new Set<string>()
  const hits: SearchHit[] = []
  for (const r of results)
    for (const h of r.hits) {
      const key = JSON.stringify([h.session_id, h.entry_id])
      if (seen.has(key)) continue
      seen.add(key)
      hits.push(h)
    }
  hits.sort(hitOrder)
  return { hits: hits.slice(0, limit), incomplete: results.some((r) => r.incomplete) }
}

const isRange = (v: unknown, length: number): boolean =>
  Array.isArray(v) &&
  v.length === 2 &&
  Number.isInteger(v[0]) &&
  Number.isInteger(v[1]) &&
  0 <= (v[0] as number) &&
  (v[0] as number) < (v[1] as number) &&
  (v[1] as number) <= length

const isHit = (h: unknown): h is SearchHit => {
  if (typeof h !== 'object' || h === null) return false
  const x = h as Record<string, unknown>
  const snippet = x.snippet as Record<string, unknown> | null | undefined
  return (
    typeof x.session_id === 'string' &&
    (x.entry_id === null || typeof x.entry_id === 'string') &&
    ROLES.has(x.role as SearchRole) &&
    (x.role === 'title') === (x.entry_id === null) &&
    typeof x.score === 'number' &&
    Number.isFinite(x.score) &&
    typeof x.on_active_path === 'boolean' &&
    typeof x.timestamp === 'number' &&
    Number.isFinite(x.timestamp) &&
    typeof snippet === 'object' &&
    snippet !== null &&
    typeof snippet.text === 'string' &&
    Array.isArray(snippet.highlights) &&
    snippet.highlights.every((r) => isRange(r, (snippet.text as string).length))
  )
}

/**
 * Checks a search answer that came from elsewhere (a server is input too): the hit shape, at
 * most `SEARCH_LIMITS.limit` hits, highlights inside their snippet. Throws
 * `session/invalid_request` naming what is wrong.
 */
export function checkSearchResult(value: unknown): SearchResult {
  const v = value as Partial<SearchResult> | null
  if (typeof v !== 'object' || v === null || !Array.isArray(v.hits) || typeof v.incomplete !== 'boolean')
    throw invalid('search answer: expected { hits: [...], incomplete: boolean }')
  if (v.hits.length > SEARCH_LIMITS.limit)
    throw invalid(`search answer: at most ${SEARCH_LIMITS.limit} hits (it has ${v.hits.length})`)
  v.hits.forEach((h: unknown, i) => {
    if (!isHit(h)) throw invalid(`search answer: hits[${i}] is not a search hit`)
  })
  return { hits: v.hits, incomplete: v.incomplete }
}
