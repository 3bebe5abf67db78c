import { ready, type LiveState } from './live-state.js'
import type { SyncStatus } from './observable-like.js'
import { useColloquy } from './provider.js'
import { useLive } from './use-live.js'

const NO_SYNC = ready(null)

/** The provider's sync status, live; `data: null` when the provider was given no sync client. */
export function useSyncStatus(): LiveState<SyncStatus | null> {
  const { sync } = useColloquy()
  const state = useLive(sync && { owner: sync, key: 'status$', open: () => sync.status$ })
  return sync ? state : NO_SYNC
}
