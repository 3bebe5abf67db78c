import type { SessionEntry } from '@colloquy/core'
import type { LiveState } from './live-state.js'
import { useStore } from './provider.js'
import { storeQuery } from './query.js'
import { useLive } from './use-live.js'

/** One entry, live; re-renders only when that entry changes. `data: null` when it does not exist. */
export function useEntry(session_id: string, entry_id: string): LiveState<SessionEntry | null> {
  const store = useStore()
  return useLive(store && storeQuery(store, 'entry$', [session_id, entry_id]))
}
