// What every app loads. Whatever a module here re-exports is in an app's first chunk even when
// unused (esbuild's code splitting keeps the import), so code only replication, servers and
// importers use is exported from `./replica` and `./wire` instead, and the store fetches its own
// copy of it on first use.
export * from './model.js'
export { SessionError, type SessionErrorCode } from './errors.js'
export { createStore, type Store, type StoreOptions, type ApplyReplicaOptions, type AttachmentSource, type CallOptions } from './store.js'
export type { MetaField, ReplicaChange, ReplicaResult, ReplicaPolicy } from './replica.js'
export { indexedDbStorage, type IndexedDbStorageOptions } from './idb-storage.js'
export { memoryStorage } from './memory-storage.js'
export type { Storage, StorageReader, SessionHead, WriteSet, SideWrite } from './storage.js'
export { branchOf, newestLeafUnder, type BranchPosition, type LiveMessagesRequest, type SessionTree } from './live.js'
export type { SessionImport, ImportOptions, ImportAttachment } from './import.js'
export type { BeginImportOptions, ImportEnd, ImportWriter } from './import-writer.js'
export type { Commit, ChangePayload, SessionChange, ChangeSource } from './changes.js'
export type { CommitHook, AppliedOp, CallGuard, Engine } from './engine.js'
export type { Draft } from './draft.js'
export type { IdKind } from './context.js'
export { LIMITS, isValidId, isWellFormed, utf8Bytes } from './limits.js'
export { jsonEqual, metadataMatches } from './json.js'
export { parseEventConfig, eventMatches } from './events.js'
export { payloadOf } from './relay.js'
export type { DraftState } from './live.js'
export type { BlobWrite } from './storage.js'
