export { createColloquy, provideColloquy, useStore, type ColloquyOptions } from './plugin.js'
export {
  useBranch,
  useEntry,
  useMessageIds,
  useMessages,
  useSession,
  useSessions,
} from './store-composables.js'
export {
  useAttachments,
  useAttachmentUrl,
  useDraft,
  useMentions,
  type DraftBinding,
  type DraftOptions,
} from './attachment-composables.js'
export { useSearch } from './use-search.js'
export { useSyncStatus } from './use-sync-status.js'
export { useObservable } from './use-observable.js'
export type { LiveRef } from './use-live.js'
export { newestLeafUnder } from '@colloquy/core'
export type { Branch } from '@colloquy/kit'
export { LOADING, type LiveState } from '@colloquy/kit'
export type { ObservableLike, SearchLike, SearchOptions, SyncLike, SyncStatus } from '@colloquy/kit'
