import type { ListRequest, LiveMessagesRequest, MessageItem, SessionEntry, SessionMeta } from '@colloquy/core'
import { toValue, type MaybeRefOrGetter } from 'vue'
import {
  type Branch,
  branchQuery,
  entryQuery,
  messageIdsQuery,
  messagesQuery,
  sessionQuery,
  sessionsQuery,
} from '@colloquy/kit'
import { useStore } from './plugin.js'
import { useLive, type LiveRef } from './use-live.js'

// Requests are read through toValue (tracking refs inside reactive objects too) and handed to
// the store as plain JSON, never as reactive proxies.
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value ?? null)) as T

/** The session list, live (the first page of `session::list`: `limit`, `status`, `kinds`, `metadata`, `order`). */
export function useSessions(
  request: MaybeRefOrGetter<Omit<ListRequest, 'cursor'> | undefined> = {},
): LiveRef<readonly SessionMeta[]> {
  const store = useStore()
  return useLive(() => store.value && sessionsQuery(store.value, plain(toValue(request)) ?? {}))
}

/** One session's meta, live; `data: null` when there is no such session. */
export function useSession(session_id: MaybeRefOrGetter<string>): LiveRef<SessionMeta | null> {
  const store = useStore()
  return useLive(() => store.value && sessionQuery(store.value, toValue(session_id)))
}

/**
 * The transcript (the active path, or the chain ending at `from_entry_id`) as items; unchanged
 * items keep their identity. The component reading it re-renders on every change, streamed
 * tokens included: a long chat's list should read `useMessageIds` and its rows `useEntry`.
 */
export function useMessages(request: MaybeRefOrGetter<LiveMessagesRequest>): LiveRef<readonly MessageItem[]> {
  const store = useStore()
  return useLive(() => store.value && messagesQuery(store.value, plain(toValue(request))))
}

/** The entry ids of the same transcript: they change on an append or a branch switch, not on a streamed token. */
export function useMessageIds(request: MaybeRefOrGetter<LiveMessagesRequest>): LiveRef<readonly string[]> {
  const store = useStore()
  return useLive(() => store.value && messageIdsQuery(store.value, plain(toValue(request))))
}

/** One entry, live; changes only when that entry does. `data: null` when it does not exist. */
export function useEntry(
  session_id: MaybeRefOrGetter<string>,
  entry_id: MaybeRefOrGetter<string>,
): LiveRef<SessionEntry | null> {
  const store = useStore()
  return useLive(() => store.value && entryQuery(store.value, toValue(session_id), toValue(entry_id)))
}

/**
 * Where `entry_id` sits among its siblings, with actions to switch (the active leaf moves to
 * the newest leaf under the chosen sibling). All pickers of a session share one read of its tree.
 */
export function useBranch(
  session_id: MaybeRefOrGetter<string>,
  entry_id: MaybeRefOrGetter<string>,
): LiveRef<Branch> {
  const store = useStore()
  return useLive(() => store.value && branchQuery(store.value, toValue(session_id), toValue(entry_id)))
}
