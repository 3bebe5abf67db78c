import type { ListRequest, LiveMessagesRequest, MessageItem, SessionEntry, SessionMeta, SessionTree, Store } from '@colloquy/core'
import { branchSelection, type Branch } from './branch.js'
import { watchEntry, watchPath, watchShape } from './commit-hub.js'
import type { ObservableLike, SyncLike, SyncStatus } from './observable-like.js'
import type { Derivation, Query } from './query.js'
import { queryKey } from './query-key.js'
import { readOnWake } from './read-on-wake.js'
import { sameItems } from './same-items.js'

// The questions the React hooks and the Vue composables ask, one builder each: the bindings
// differ only in how they hold the answer.

export const sessionsQuery = (store: Store, request: Omit<ListRequest, 'cursor'>): Query<SessionMeta[]> => ({
  owner: store,
  key: queryKey('sessions$', [request]),
  open: () => store.sessions$(request),
})

export const sessionQuery = (store: Store, session_id: string): Query<SessionMeta | null> => ({
  owner: store,
  key: queryKey('session$', [session_id]),
  open: () => store.session$(session_id),
})

export const messagesQuery = (store: Store, request: LiveMessagesRequest): Query<MessageItem[]> => ({
  owner: store,
  key: queryKey('messages$', [request]),
  open: () => store.messages$(request),
})

const entryIds: Derivation<MessageItem[], readonly string[]> = {
  key: 'entry ids',
  create: () => ({ select: (items) => items.map((i) => i.entry_id), equal: sameItems }),
}

/** Read again only when the sequence may have changed, so a streamed token costs nothing here. */
export const messageIdsQuery = (store: Store, request: LiveMessagesRequest): Query<MessageItem[], readonly string[]> => ({
  owner: store,
  key: queryKey('messages$ ids', [request]),
  open: () => readOnWake(() => store.messages$(request), (wake) => watchPath(store, request.session_id, wake)),
  derive: entryIds,
})

/** Woken by the commit hub for this entry only (core's entry$ wakes on every commit). */
export const entryQuery = (store: Store, session_id: string, entry_id: string): Query<SessionEntry | null> => ({
  owner: store,
  key: queryKey('entry$', [session_id, entry_id]),
  open: () => readOnWake(() => store.entry$(session_id, entry_id), (wake) => watchEntry(store, session_id, entry_id, wake)),
})

/**
 * All pickers of a session share one read of its tree, taken again only when entries are added
 * (a streamed token moves no branch); each derives its own position from it.
 */
export const branchQuery = (store: Store, session_id: string, entry_id: string): Query<SessionTree | null, Branch> => ({
  owner: store,
  key: queryKey('tree shape', [session_id]),
  open: () => readOnWake(() => store.tree$(session_id), (wake) => watchShape(store, session_id, wake)),
  derive: { key: entry_id, create: () => branchSelection(store, session_id, entry_id) },
})

export const syncStatusQuery = (sync: SyncLike): Query<SyncStatus> => ({ owner: sync, key: 'status$', open: () => sync.status$ })

/** Bindings given the same observable object share one subscription to it. */
export const observableQuery = <T>(observable$: ObservableLike<T>): Query<T> => ({ owner: observable$, key: 'observable', open: () => observable$ })
