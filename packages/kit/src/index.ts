// What the React and Vue bindings share: each binding adds only its framework's way of
// subscribing (useSyncExternalStore, shallowRef) around these.
export type { ObservableLike, SyncLike, SyncStatus } from './observable-like.js'
export { LOADING, ready, type LiveState } from './live-state.js'
export type { Query } from './query.js'
export { listen, read } from './shared-query.js'
export { deriver } from './derive.js'
export type { Branch } from './branch.js'
export {
  attachmentsQuery,
  branchQuery,
  draftQuery,
  entryQuery,
  mentionsQuery,
  messageIdsQuery,
  messagesQuery,
  observableQuery,
  sessionQuery,
  sessionsQuery,
  syncStatusQuery,
} from './queries.js'
export { searchQuery, type SearchLike, type SearchOptions } from './search-query.js'
export { DraftSaver, shownDraftText } from './draft-saver.js'
export { groupIds } from './row-groups.js'
