export { ColloquyProvider, useStore, type ColloquyProviderProps } from './provider.js'
export { MessageList, type MessageListProps } from './message-list.js'
export { useBranch, useEntry, useMessageIds, useMessages, useSession, useSessions } from './store-hooks.js'
export {
  useAttachments,
  useAttachmentUrl,
  useDraft,
  useMentions,
  type DraftBinding,
  type DraftOptions,
} from './attachment-hooks.js'
export { useSearch } from './use-search.js'
export { useSyncStatus } from './use-sync-status.js'
export { useObservable } from './use-observable.js'
export { newestLeafUnder } from '@colloquy/core'
export type { Branch } from '@colloquy/kit'
export { LOADING, type LiveState } from '@colloquy/kit'
export type { ObservableLike, SearchLike, SearchOptions, SyncLike, SyncStatus } from '@colloquy/kit'
