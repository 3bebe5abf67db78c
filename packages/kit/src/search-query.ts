import type { SearchRequest, SearchResult } from '@colloquy/core/search'
import type { ObservableLike } from './observable-like.js'
import type { Query } from './query.js'
import { queryKey } from './query-key.js'

/** What `useSearch` takes besides the words: `SearchRequest`'s filters, `limit` and `prefix`. */
export type SearchOptions = Partial<Omit<SearchRequest, 'query'>>

/** The one thing the bindings need of a search handle (`enableSearch`'s result fits it). */
export interface SearchLike {
  query$(request: unknown): ObservableLike<SearchResult>
}

// A type-only import of the search entry: the bindings never load it, the app does (when it
// enables search), so an app that never searches bundles none of it.
export const searchQuery = (
  search: SearchLike,
  query: string,
  options: SearchOptions,
): Query<SearchResult> => ({
  owner: search,
  key: queryKey('query$', [query, options]),
  open: () => search.query$({ ...options, query }),
})
