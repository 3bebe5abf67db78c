import type { Store } from '@colloquy/core'
import { enableSearch, type Search, type SearchHit } from '@colloquy/core/search'

// What both demo palettes (React and Vue) share: the one search handle per store, the labels,
// the snippet's marked parts and the grouping by chat. An entry of its own (`chat-kit/search`),
// imported only by the palettes, which load on the first Ctrl/Cmd+K: an app session that never
// searches neither downloads the search entry nor builds an index.

const handles = new WeakMap<Store, Promise<Search>>()

/**
 * The store's one search handle, enabled on first use and kept for the page's life: closing
 * the palette keeps the index following the store, so opening it again answers at once. A
 * failed enable is forgotten, so the next opening tries again.
 */
export function searchOf(store: Store): Promise<Search> {
  let handle = handles.get(store)
  if (!handle) {
    handle = enableSearch(store)
    handles.set(store, handle)
    handle.catch(() => handles.delete(store))
    // A lock ends an encrypted store's search (its index is dropped): the next use after the
    // unlock enables it again.
    const sub = store.locked$.subscribe((locked) => {
      if (!locked) return
      handles.delete(store)
      queueMicrotask(() => sub.unsubscribe())
    })
  }
  return handle
}

/** Closes the store's search handle, if any (its database is to be deleted: "Encrypt my chats"). */
export async function closeSearchOf(store: Store): Promise<void> {
  const handle = handles.get(store)
  handles.delete(store)
  ;(await handle?.catch(() => undefined))?.close()
}

/** Hits asked for: enough to scroll through, few enough to render on every keystroke. */
export const SEARCH_LIMIT = 40

export const ROLE_LABEL: Record<SearchHit['role'], string> = {
  user: 'You',
  assistant: 'Assistant',
  function_result: 'Tool',
  custom: 'Note',
  title: 'Title',
}

/** A piece of a snippet: its text, and whether it is a matched word (shown marked). */
export interface SnippetPart {
  text: string
  marked: boolean
  /** Where it starts in the snippet (a stable key). */
  at: number
}

/** The snippet cut at its highlights (overlapping or out-of-order ones skipped), for text nodes only. */
export function snippetParts(snippet: SearchHit['snippet']): SnippetPart[] {
  const parts: SnippetPart[] = []
  let at = 0
  for (const [start, end] of snippet.highlights) {
    if (end <= at) continue
    const from = Math.max(at, start)
    if (from > at) parts.push({ text: snippet.text.slice(at, from), marked: false, at })
    parts.push({ text: snippet.text.slice(from, end), marked: true, at: from })
    at = end
  }
  if (at < snippet.text.length) parts.push({ text: snippet.text.slice(at), marked: false, at })
  return parts
}

/** Hits grouped by chat, the chats in the order of their best hit (the hits are best first). */
export function groupByChat(hits: readonly SearchHit[]): Array<[session_id: string, hits: SearchHit[]]> {
  const bySession = new Map<string, SearchHit[]>()
  for (const hit of hits) {
    const group = bySession.get(hit.session_id)
    if (group) group.push(hit)
    else bySession.set(hit.session_id, [hit])
  }
  return [...bySession]
}

/** The status line under the palette's input, or null for none. */
export function searchStatus(state: {
  failed: string | null
  ready: boolean
  error: unknown
  typed: boolean
  answered: boolean
  hits: number
  incomplete: boolean
}): string | null {
  if (state.failed) return `Search is unavailable: ${state.failed}`
  if (!state.ready) return 'Indexing your chats…'
  if (state.error !== undefined)
    return state.error instanceof Error ? state.error.message : String(state.error)
  if (state.typed && state.answered && state.hits === 0) return 'No messages match.'
  if (state.typed && state.incomplete) return 'Showing the best matches found so far.'
  return null
}
