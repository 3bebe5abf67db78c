import type { LiveMessagesRequest, MessageItem } from '@colloquy/core'
import type { LiveState } from './live-state.js'
import { useStore } from './provider.js'
import { watchPath } from './commit-hub.js'
import { storeQuery, type Derivation } from './query.js'
import { queryKey } from './query-key.js'
import { readOnWake } from './read-on-wake.js'
import { sameItems } from './same-items.js'
import { useLive } from './use-live.js'

/**
 * The transcript (the active path, or the chain ending at `from_entry_id`) as items. Unchanged
 * items keep their identity, so rows wrapped in `React.memo` skip re-rendering; the component
 * calling this re-renders on every change, streamed tokens included.
 */
export function useMessages(request: LiveMessagesRequest): LiveState<readonly MessageItem[]> {
  const store = useStore()
  return useLive(store && storeQuery(store, 'messages$', [request]))
}

const entryIds: Derivation<MessageItem[], readonly string[]> = {
  key: 'entry ids',
  create: () => ({ select: (items) => items.map((i) => i.entry_id), equal: sameItems }),
}

/**
 * The entry ids of the same transcript. It changes only when the sequence does (an append, a
 * branch switch), not when a message's content streams in: the list of a chat view calls this
 * and each row calls `useEntry`, so a streamed token re-renders one row and nothing else.
 */
export function useMessageIds(request: LiveMessagesRequest): LiveState<readonly string[]> {
  const store = useStore()
  // Read again only when the sequence may have changed, so a streamed token costs nothing here.
  return useLive(
    store && {
      owner: store,
      key: queryKey('messages$ ids', [request]),
      open: () => readOnWake(() => store.messages$(request), (wake) => watchPath(store, request.session_id, wake)),
      derive: entryIds,
    },
  )
}
