import { ready, type LiveState, type SyncStatus, syncStatusQuery } from '@colloquy/kit'
import { useColloquy } from './provider.js'
import { useLive } from './use-live.js'

const NO_SYNC = ready(null)

/** The provider's sync status, live; `data: null` when the provider was given no sync client. */
export function useSyncStatus(): LiveState<SyncStatus | null> {
  const { sync } = useColloquy()
  const state = useLive(sync && syncStatusQuery(sync))
  return sync ? state : NO_SYNC
}
