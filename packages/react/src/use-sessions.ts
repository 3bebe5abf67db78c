import type { ListRequest, SessionMeta } from '@colloquy/core'
import type { LiveState } from './live-state.js'
import { useStore } from './provider.js'
import { storeQuery } from './query.js'
import { useLive } from './use-live.js'

/** The session list, live (first page of `session::list`: `limit`, `status`, `kinds`, `metadata`, `order`). */
export function useSessions(request: Omit<ListRequest, 'cursor'> = {}): LiveState<readonly SessionMeta[]> {
  const store = useStore()
  return useLive(store && storeQuery(store, 'sessions$', [request]))
}
