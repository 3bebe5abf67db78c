import type {
  AttachmentMeta,
  BranchPosition,
  DraftState,
  ListRequest,
  LiveMessagesRequest,
  MentionItem,
  MentionSearchRequest,
  MessageItem,
  SessionEntry,
  SessionMeta,
  Store,
} from '@colloquy/core'
import { mentions$ } from './mentions.js'
import { branchSelection, type Branch } from './branch.js'
import type { ObservableLike, SyncLike, SyncStatus } from './observable-like.js'
import type { Derivation, Query } from './query.js'
import { queryKey } from './query-key.js'
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

// Checked against the last ids before mapping: a streamed token (same sequence, one new item)
// allocates nothing, which matters at a thousand items per token.
const sameIds = (ids: readonly string[], items: readonly MessageItem[]): boolean => {
  if (ids.length !== items.length) return false
  for (let i = 0; i < ids.length; i++) if (ids[i] !== items[i].entry_id) return false
  return true
}

const entryIds: Derivation<MessageItem[], readonly string[]> = {
  key: 'entry ids',
  create: () => {
    let last: readonly string[] | undefined
    return {
      select: (items) => (last && sameIds(last, items) ? last : (last = items.map((i) => i.entry_id))),
      equal: sameItems,
    }
  },
}

/** The transcript's sequence: the ids keep their identity while a token streams into a message. */
export const messageIdsQuery = (
  store: Store,
  request: LiveMessagesRequest,
): Query<MessageItem[], readonly string[]> => ({
  owner: store,
  key: queryKey('messages$ ids', [request]),
  open: () => store.messages$(request),
  derive: entryIds,
})

/** Core routes commits by entry, so a row's query wakes only for its own entry. */
export const entryQuery = (
  store: Store,
  session_id: string,
  entry_id: string,
): Query<SessionEntry | null> => ({
  owner: store,
  key: queryKey('entry$', [session_id, entry_id]),
  open: () => store.entry$(session_id, entry_id),
})

/** Core's `branch$` emits only when siblings are added: a streamed token moves no picker. */
export const branchQuery = (
  store: Store,
  session_id: string,
  entry_id: string,
): Query<BranchPosition | null, Branch> => ({
  owner: store,
  key: queryKey('branch$', [session_id, entry_id]),
  open: () => store.branch$(session_id, entry_id),
  derive: { key: entry_id, create: () => branchSelection(store, session_id, entry_id) },
})

/** The parked composer input; emitted again only when its text or chips changed. */
export const draftQuery = (store: Store, session_id: string): Query<DraftState | null> => ({
  owner: store,
  key: queryKey('draft$', [session_id]),
  open: () => store.draft$(session_id),
})

export const attachmentsQuery = (
  store: Store,
  session_id: string,
): Query<readonly AttachmentMeta[] | null> => ({
  owner: store,
  key: queryKey('attachments$', [session_id]),
  open: () => store.attachments$(session_id),
})

export const mentionsQuery = (store: Store, request: MentionSearchRequest): Query<MentionItem[]> => ({
  owner: store,
  key: queryKey('mentions$', [request]),
  open: () => mentions$(store, request),
})

export const syncStatusQuery = (sync: SyncLike): Query<SyncStatus> => ({
  owner: sync,
  key: 'status$',
  open: () => sync.status$,
})

/** Bindings given the same observable object share one subscription to it. */
export const observableQuery = <T>(observable$: ObservableLike<T>): Query<T> => ({
  owner: observable$,
  key: 'observable',
  open: () => observable$,
})
