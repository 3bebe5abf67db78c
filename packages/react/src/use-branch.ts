import { branchSelection, type Branch } from './branch.js'
import type { LiveState } from './live-state.js'
import { useStore } from './provider.js'
import { storeQuery } from './query.js'
import { useLive } from './use-live.js'

/**
 * Where `entry_id` sits among its siblings, with actions to switch. All pickers of a session
 * share one `tree$` subscription; each re-renders only when its own position changes.
 */
export function useBranch(session_id: string, entry_id: string): LiveState<Branch> {
  const store = useStore()
  return useLive(store && storeQuery(store, 'tree$', [session_id], { key: entry_id, create: () => branchSelection(store, session_id, entry_id) }))
}
