import type { SessionMeta } from '@colloquy/core'
import type { LiveState } from './live-state.js'
import { useStore } from './provider.js'
import { storeQuery } from './query.js'
import { useLive } from './use-live.js'

/** One session's meta, live; `data: null` when there is no such session. */
export function useSession(session_id: string): LiveState<SessionMeta | null> {
  const store = useStore()
  return useLive(store && storeQuery(store, 'session$', [session_id]))
}
