import { useMemo, useRef } from 'react'
import { distinctUntilChanged, map } from 'rxjs'
import type { JsonObject, SessionMeta } from '@colloquy/core'
import { useObservable, useStore } from '@colloquy/react'
import { createThread } from '@colloquy/parts'
import type { ExternalStoreThreadData, ExternalStoreThreadListAdapter } from '@assistant-ui/react'

/** Colloquy has no archived state: an archived session carries this metadata key. */
export const ARCHIVED_KEY = 'archived'

const isArchived = (m: SessionMeta): boolean => m.metadata?.[ARCHIVED_KEY] === true

const threadOf = <S extends 'regular' | 'archived'>(
  m: SessionMeta,
  status: S,
): ExternalStoreThreadData<S> => ({ status, id: m.session_id, ...(m.title.trim() && { title: m.title }) })

interface Lists {
  threads: ExternalStoreThreadData<'regular'>[]
  archivedThreads: ExternalStoreThreadData<'archived'>[]
}
const NO_LISTS: Lists = { threads: [], archivedThreads: [] }

const toLists = (all: readonly SessionMeta[]): Lists => ({
  threads: all.filter((m) => !isArchived(m)).map((m) => threadOf(m, 'regular')),
  archivedThreads: all.filter(isArchived).map((m) => threadOf(m, 'archived')),
})

const sameThreads = (
  a: readonly ExternalStoreThreadData<'regular' | 'archived'>[],
  b: readonly ExternalStoreThreadData<'regular' | 'archived'>[],
): boolean => a.length === b.length && a.every((t, i) => t.id === b[i].id && t.title === b[i].title)

/**
 * assistant-ui's thread list over `sessions$` (newest first, live in every tab): new, switch,
 * rename, archive / unarchive (a metadata flag) and delete.
 */
export function useThreadListAdapter(options: {
  session_id: string | null
  onSessionChange?: (session_id: string | null) => void
}): ExternalStoreThreadListAdapter {
  const store = useStore()
  // Only what the list shows: a streamed chunk touches its session's `updated_at`, which must not
  // re-render the component holding the runtime (and with it everything under its provider).
  const lists$ = useMemo(
    () =>
      store?.sessions$({ order: 'updated_desc', limit: 500 }).pipe(
        map(toLists),
        distinctUntilChanged(
          (a, b) => sameThreads(a.threads, b.threads) && sameThreads(a.archivedThreads, b.archivedThreads),
        ),
      ),
    [store],
  )
  const lists = useObservable<Lists, null>(lists$, null)
  const { threads, archivedThreads } = lists ?? NO_LISTS
  const latest = useRef(options)
  latest.current = options

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
    isLoading: lists === null,
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
