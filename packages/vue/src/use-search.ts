import type { SearchResult } from '@colloquy/core/search'
import { toRaw, toValue, type MaybeRefOrGetter } from 'vue'
import { type SearchLike, type SearchOptions, searchQuery } from '@colloquy/kit'
import { useLive, type LiveRef } from './use-live.js'

/**
 * `search.query$` live: the best hits for `query`, again whenever the index changes them (a new
 * message, another tab's write, a sync). It takes the handle `enableSearch(store)` returned
 * rather than enabling search itself, so the app decides when the search entry loads (a dynamic
 * import on first use keeps it out of the start bundle), with which options, and when it closes.
 * Each argument may be a ref or getter: a new query re-subscribes, options are compared by value.
 * Loading while `search` is null and until the first answer; a bad request (too long, too many
 * terms) is an `error` state carrying its `SessionError`, as with the store composables.
 */
export function useSearch(
  search: MaybeRefOrGetter<SearchLike | null | undefined>,
  query: MaybeRefOrGetter<string>,
  options: MaybeRefOrGetter<SearchOptions> = {},
): LiveRef<SearchResult> {
  return useLive(() => {
    // The handle is the subscription's owner: a reactive proxy of it would be another owner.
    const handle = toRaw(toValue(search))
    return handle ? searchQuery(handle, toValue(query), toValue(options)) : null
  })
}
