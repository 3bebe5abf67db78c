import type { SearchResult } from '@colloquy/core/search'
import { type LiveState, type SearchLike, type SearchOptions, searchQuery } from '@colloquy/kit'
import { useLive } from './use-live.js'

/**
 * `search.query$` live: the best hits for `query`, again whenever the index changes them (a new
 * message, another tab's write, a sync). It takes the handle `enableSearch(store)` returned
 * rather than enabling search itself, so the app decides when the search entry loads (a dynamic
 * import on first use keeps it out of the start bundle), with which options, and when it closes.
 * Loading while `search` is null (still loading) and until the first answer; options are compared
 * by value, so an inline object keeps the subscription. A bad request (too long, too many terms)
 * is an `error` state carrying its `SessionError`, as with the store hooks: a search box shows it.
 */
export function useSearch(
  search: SearchLike | null | undefined,
  query: string,
  options: SearchOptions = {},
): LiveState<SearchResult> {
  return useLive(search ? searchQuery(search, query, options) : null)
}
