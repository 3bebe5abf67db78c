export { createServer, type ColloquyServer, type ServerOptions } from './server.js'
export { runCommandLine, type CommandLineHooks } from './command-line.js'
export {
  fileStorage,
  postgresStorage,
  type FileStorageOptions,
  type PostgresStorageOptions,
  type ServerStorage,
} from './storage/index.js'
export { memoryStorage, type MemoryStorageOptions } from './storage/memory.js'
export type { ChangeFeed, FeedPage, FeedStorage } from './changes/change-feed.js'
export type { Principal, Authenticate, AuthOptions } from './auth.js'
export type { Limits } from './http/app.js'
export type { ChangeLog, ChangePage } from './changes/change-log.js'
export type { ChangeKind, ChangeRecord } from './changes/change-index.js'
export type { PushMutation, PushResult, SequencedChange, StreamMessage } from '@colloquy/core/protocol'
export { boundedName } from './storage/file/file-names.js'
export { WORK_BUDGETS, type WorkKind, type WorkReport } from './work.js'
export { RPC_FUNCTION_IDS } from './http/rpc.js'
export { SEARCH_FUNCTION } from './search/server-search.js'
