import { ready, type SyncStatus, syncStatusQuery } from '@colloquy/kit'
import { useColloquy } from './plugin.js'
import { useLive, type LiveRef } from './use-live.js'

/** The provided sync client's status, live; `data: null` when none was provided. */
export function useSyncStatus(): LiveRef<SyncStatus | null> {
  const { sync } = useColloquy()
  return useLive<SyncStatus, SyncStatus | null>(() => sync.value && syncStatusQuery(sync.value), ready(null))
}
