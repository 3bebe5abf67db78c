import { useMemo, useRef } from 'react'
import type { JsonObject, SessionMeta } from '@colloquy/core'
import { useSessions, useStore } from '@colloquy/react'
import { createThread } from '@colloquy/parts'
import type { ExternalStoreThreadData, ExternalStoreThreadListAdapter } from '@assistant-ui/react'

/** Colloquy has no archived state: an archived session carries this metadata key. */
export const ARCHIVED_KEY = 'archived'

const isArchived = (m: SessionMeta): boolean => m.metadata?.[ARCHIVED_KEY] === true

const threadOf = <S extends 'regular' | 'archived'>(m: SessionMeta, status: S): ExternalStoreThreadData<S> =>
  ({ status, id: m.session_id, ...(m.title.trim() && { title: m.title }) })

/**
 * assistant-ui's thread list over `sessions$` (newest first, live in every tab): new, switch,
 * rename, archive / unarchive (a metadata flag) and delete.
 */
export function useThreadListAdapter(options: {
  session_id: string | null
  onSessionChange?: (session_id: string | null) => void
}): ExternalStoreThreadListAdapter {
  const store = useStore()
  const sessions = useSessions({ order: 'updated_desc', limit: 500 })
  const latest = useRef(options)
  latest.current = options
  const list = sessions.data
  const { threads, archivedThreads } = useMemo(() => {
    const all = list ?? []
    return {
      threads: all.filter((m) => !isArchived(m)).map((m) => threadOf(m, 'regular')),
      archivedThreads: all.filter(isArchived).map((m) => threadOf(m, 'archived')),
    }
  }, [list])

  const setArchived = async (id: string, archived: boolean): Promise<void> => {
    const meta = (await store?.get({ session_id: id }))?.meta
    if (!store || !meta) return
    const metadata: JsonObject = { ...(meta.metadata ?? {}) }
    if (archived) metadata[ARCHIVED_KEY] = true
    else delete metadata[ARCHIVED_KEY]
    await store.setMeta({ session_id: id, metadata })
    if (archived && latest.current.session_id === id) latest.current.onSessionChange?.(null)
  }

  return {
    threadId: options.session_id ?? undefined,
    isLoading: sessions.status === 'loading',
    threads,
    archivedThreads,
    onSwitchToNewThread: async () => {
      if (!store) return
      latest.current.onSessionChange?.(await createThread(store))
    },
    onSwitchToThread: (id) => latest.current.onSessionChange?.(id),
    onRename: async (id, title) => {
      await store?.setMeta({ session_id: id, title: title.trim() })
    },
    onArchive: (id) => setArchived(id, true),
    onUnarchive: (id) => setArchived(id, false),
    onDelete: async (id) => {
      await store?.delete({ session_id: id })
      if (latest.current.session_id === id) latest.current.onSessionChange?.(null)
    },
  }
}
