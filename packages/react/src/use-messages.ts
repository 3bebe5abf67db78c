import type { LiveMessagesRequest, MessageItem } from '@colloquy/core'
import type { LiveState } from './live-state.js'
import { useStore } from './provider.js'
import { storeQuery, type Derivation } from './query.js'
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
  return useLive(store && storeQuery(store, 'messages$', [request], entryIds))
}
