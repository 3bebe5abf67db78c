// `@colloquy/core/search`: full-text search over every message of every session, on the device.
// Its own entry point, so an app that never searches bundles none of it.
export { enableSearch, type QueryRun, type Search, type SearchOptions } from './enable-search.js'
export { SEARCH_WORK_BUDGET } from './run-query.js'
export type { SearchHit, SearchResult } from './hit.js'
export type { Snippet } from './snippet.js'
export { checkSearchRequest } from './check-request.js'
export { mergeResults, checkSearchResult, hitOrder } from './merge-results.js'
export { tokenize, termCounts, fold, type Token } from './tokenize.js'
export {
  SEARCH_LIMITS,
  parseSearchRequest,
  type SearchRequest,
  type SearchRole,
} from '../validation/search-request.js'
// What a server's own full text (PostgreSQL) needs to answer as this index does: the same query
// parsing, document text, BM25, phrase check, order and snippets (one implementation of each).
export { parseQuery, type ParsedQuery, type QueryTerm } from './parse-query.js'
export { entryText, type TextOptions } from './doc-text.js'
export { bm25, PREFIX_KEEP, PREFIX_SCAN } from './inverted-index.js'
export { holdsPhrase } from './run-query.js'
export { rankOrder, type RankKey } from './rank-order.js'
export { hitMaker, type HitDoc } from './hit.js'
// What a server's own query over the index (a top-k) reads: the index and how core answers.
export type { InvertedIndex, Postings, Doc } from './inverted-index.js'
export { runQuery, type TextSource } from './run-query.js'
export { docFilter, type DocFilter } from './doc-filter.js'
