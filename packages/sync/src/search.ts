import { SessionError, type Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { checkSearchRequest, checkSearchResult, mergeResults, type SearchResult } from '@colloquy/core/search'
import { TransportError, type Transport } from './transport.js'

/** What answers a search on this device: `enableSearch(store)` of `@colloquy/core/search`. */
export interface LocalSearch {
  query(request: unknown): Promise<SearchResult>
}

export interface SyncSearchOptions {
  /** The device's own index: its hits come first, and sessions the device holds are its alone. */
  readonly local?: LocalSearch
}

export interface SyncSearchResult extends SearchResult {
  /** Whether the server answered (false: offline or unreachable; the hits are the device's only). */
  readonly server: boolean
}

/**
 * A search on this device and on the server together. The request is checked here first (the
 * validator the server uses too). The server answers for every session of the caller; of its
 * hits, those in sessions this device holds are dropped (the device's index has them as they
 * are here, edits not yet pushed included), the rest merge with the device's by score, then
 * recency (`mergeResults`). A server that cannot be reached leaves the device's answer, marked
 * `incomplete` and `server: false`; a refusal (401, 400) is thrown as a `SessionError`.
 */
export async function searchWithServer(
  store: Store,
  transport: Transport,
  request: unknown,
  options: SyncSearchOptions = {},
): Promise<SyncSearchResult> {
  const req = checkSearchRequest(request)
  if (!transport.search) throw new SessionError('session/invalid_request', 'this transport cannot search')
  const local = options.local ? options.local.query(req) : Promise.resolve({ hits: [], incomplete: false })
  let remote: SearchResult | undefined
  try {
    // A server is input too: its answer is checked before a hit of it is shown.
    remote = checkSearchResult(await transport.search(req))
  } catch (e) {
    if (!(e instanceof TransportError)) throw e
    if (!e.retryable)
      throw new SessionError('session/invalid_request', `the server refused the search: ${e.message}`)
  }
  const mine = await local
  if (!remote) return { ...mine, incomplete: true, server: false }
  const host = hostOf(store)
  const theirs = {
    hits: remote.hits.filter((h) => !host.has(h.session_id)),
    incomplete: remote.incomplete,
  }
  return { ...mergeResults([mine, theirs], req.limit), server: true }
}
