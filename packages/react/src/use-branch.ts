import { branchSelection, type Branch } from './branch.js'
import { watchShape } from './commit-hub.js'
import type { LiveState } from './live-state.js'
import { useStore } from './provider.js'
import { queryKey } from './query-key.js'
import { readOnWake } from './read-on-wake.js'
import { useLive } from './use-live.js'

/**
 * Where `entry_id` sits among its siblings, with actions to switch. All pickers of a session
 * share one read of its tree, taken again only when entries are added (a streamed token moves
 * no branch); each picker re-renders only when its own position changes.
 */
export function useBranch(session_id: string, entry_id: string): LiveState<Branch> {
  const store = useStore()
  return useLive(
    store && {
      owner: store,
      key: queryKey('tree shape', [session_id]),
      open: () => readOnWake(() => store.tree$(session_id), (wake) => watchShape(store, session_id, wake)),
      derive: { key: entry_id, create: () => branchSelection(store, session_id, entry_id) },
    },
  )
}
