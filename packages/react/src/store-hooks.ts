import type { ListRequest, LiveMessagesRequest, MessageItem, SessionEntry, SessionMeta } from '@colloquy/core'
import {
  type Branch,
  type LiveState,
  branchQuery,
  entryQuery,
  messageIdsQuery,
  messagesQuery,
  sessionQuery,
  sessionsQuery,
} from '@colloquy/kit'
import { useStore } from './provider.js'
import { useLive } from './use-live.js'

/** The session list, live (the first page of `session::list`: `limit`, `status`, `kinds`, `metadata`, `order`). */
export function useSessions(request: Omit<ListRequest, 'cursor'> = {}): LiveState<readonly SessionMeta[]> {
  const store = useStore()
  return useLive(store && sessionsQuery(store, request))
}

/** One session's meta, live; `data: null` when there is no such session. */
export function useSession(session_id: string): LiveState<SessionMeta | null> {
  const store = useStore()
  return useLive(store && sessionQuery(store, session_id))
}

/**
 * The transcript (the active path, or the chain ending at `from_entry_id`) as items. Unchanged
 * items keep their identity, so rows wrapped in `React.memo` skip re-rendering; the component
 * calling this re-renders on every change, streamed tokens included.
 */
export function useMessages(request: LiveMessagesRequest): LiveState<readonly MessageItem[]> {
  const store = useStore()
  return useLive(store && messagesQuery(store, request))
}

/**
 * The entry ids of the same transcript. They change only when the sequence does (an append, a
 * branch switch), not when a message's content streams in: the list of a chat view calls this
 * and each row calls `useEntry`, so a streamed token re-renders one row and nothing else.
 */
export function useMessageIds(request: LiveMessagesRequest): LiveState<readonly string[]> {
  const store = useStore()
  return useLive(store && messageIdsQuery(store, request))
}

/** One entry, live; re-renders only when that entry changes. `data: null` when it does not exist. */
export function useEntry(session_id: string, entry_id: string): LiveState<SessionEntry | null> {
  const store = useStore()
  return useLive(store && entryQuery(store, session_id, entry_id))
}

/**
 * Where `entry_id` sits among its siblings, with actions to switch. All pickers of a session
 * share one read of its tree; each re-renders only when its own position changes.
 */
export function useBranch(session_id: string, entry_id: string): LiveState<Branch> {
  const store = useStore()
  return useLive(store && branchQuery(store, session_id, entry_id))
}
