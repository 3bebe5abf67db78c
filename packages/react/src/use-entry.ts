import type { SessionEntry } from '@colloquy/core'
import { watchEntry } from './commit-hub.js'
import type { LiveState } from './live-state.js'
import { useStore } from './provider.js'
import { queryKey } from './query-key.js'
import { readOnWake } from './read-on-wake.js'
import { useLive } from './use-live.js'

/** One entry, live; re-renders only when that entry changes. `data: null` when it does not exist. */
export function useEntry(session_id: string, entry_id: string): LiveState<SessionEntry | null> {
  const store = useStore()
  return useLive(
    store && {
      owner: store,
      key: queryKey('entry$', [session_id, entry_id]),
      open: () => readOnWake(() => store.entry$(session_id, entry_id), (wake) => watchEntry(store, session_id, entry_id, wake)),
    },
  )
}
