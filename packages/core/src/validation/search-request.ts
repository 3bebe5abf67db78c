import { invalid } from '../model/errors.js'
import type { Role } from '../model/model.js'
import { array, id, oneOf, str, type Parser } from './validate.js'
import { bool, num, object, opt, parseWith, uint } from './record-parsers.js'
import { checkBoundedString } from './limits.js'

/**
 * Bounds on a full-text search request (`@colloquy/core/search`). A query is what a person types
 * into a search box: 256 characters and 32 terms (a CJK word counts a term per character pair)
 * are far above that and keep the terms a query intersects, and so its work, small.
 */
export const SEARCH_LIMITS = Object.freeze({
  /** The query's length in UTF-8 bytes. */
  queryBytes: 1024,
  /** Terms after tokenizing (quoted phrases count each word). */
  terms: 32,
  /** Hits in one answer. */
  limit: 100,
  /** Sessions named by one `session_ids` filter. */
  sessions: 1000,
})

/** What can be searched besides messages: a session's title is a hit of its own. */
export type SearchRole = Role | 'title'
const ROLES: readonly SearchRole[] = ['user', 'assistant', 'function_result', 'custom', 'title']

export interface SearchRequest {
  /** Words, a `"quoted phrase"`, or both; the last word also matches as a prefix (as you type). */
  readonly query: string
  /** Hits in the answer, best first; default 20, at most `SEARCH_LIMITS.limit`. */
  readonly limit: number
  /** Only these sessions. */
  readonly session_ids?: readonly string[]
  /** Only these roles (`title` for session titles). */
  readonly roles?: readonly SearchRole[]
  /** Only messages whose timestamp is at or after `from` / before `to` (ms since the epoch). */
  readonly from?: number
  readonly to?: number
  /** Only messages on their session's active path (titles always are). */
  readonly active_path_only: boolean
  /** Whether the last word matches as a prefix; default true. */
  readonly prefix: boolean
}

const boundedList =
  <T>(item: Parser<T>, max: number): Parser<readonly T[]> =>
  (v, p) => {
    if (Array.isArray(v) && v.length > max) throw invalid(`${p}: at most ${max} items`)
    return array(item)(v, p)
  }

const query: Parser<string> = (v, p) => checkBoundedString(str(v, p), SEARCH_LIMITS.queryBytes, p, 'a query')
const limit: Parser<number> = (v, p) => {
  const n = uint(v, p)
  if (n < 1 || n > SEARCH_LIMITS.limit) throw invalid(`${p}: must be between 1 and ${SEARCH_LIMITS.limit}`)
  return n
}

/** The request's schema (its fields are what `test/docs/rpc-bodies.test.ts` holds the server README to). */
export const searchRequestSchema = object<SearchRequest>({
  query: { p: query, req: true },
  limit: opt(limit, 20),
  session_ids: opt(boundedList(id, SEARCH_LIMITS.sessions)),
  roles: opt(boundedList(oneOf(ROLES), ROLES.length)),
  from: opt(num),
  to: opt(num),
  active_path_only: opt(bool, false),
  prefix: opt(bool, true),
})

/** Checks a search request (throws `session/invalid_request` naming the field). */
export const parseSearchRequest = (request: unknown): SearchRequest => parseWith(searchRequestSchema, request)
