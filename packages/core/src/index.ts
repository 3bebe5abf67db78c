// What apps import: the store, its storages, the contract's model, and the helpers an app calls.
// Whatever a module here re-exports is in an app's first chunk even when unused (esbuild's code
// splitting keeps the import, and a module with top-level work such as a compiled RegExp stays
// whole), so code only replication, servers and importers use is exported from `./replica` and
// `./wire` (the validators: limits, ids, the mime rule, event configs), and what packages
// hosting a store need from `./host` (comparing and filtering records as the store does).
export * from './model/model.js'
export { SessionError, type SessionErrorCode } from './model/errors.js'
export {
  createStore,
  type Store,
  type StoreOptions,
  type ApplyReplicaOptions,
  type AttachmentSource,
  type CallOptions,
  type EncryptionOptions,
  type Secret,
} from './store.js'
export type { MetaField, ReplicaChange, ReplicaResult, ReplicaPolicy } from './model/replica-change.js'
export { changeSession } from './model/replica-change.js'
export { indexedDbStorage, type IndexedDbStorageOptions } from './storage/idb/idb-storage.js'
export { deleteIndexedDbStore } from './storage/idb/delete-store.js'
export { memoryStorage } from './storage/memory/memory-storage.js'
export type { StorageUsage } from './live/device-storage.js'
export type { Storage, StorageReader, SessionHead, WriteSet, SideWrite } from './storage/seam.js'
export {
  branchOf,
  newestLeafUnder,
  type BranchPosition,
  type LiveMessagesRequest,
  type SessionTree,
} from './live/live.js'
export type { SessionImport, ImportOptions, ImportAttachment } from './import/types.js'
export type { BeginImportOptions, ImportEnd, ImportWriter } from './import/import-writer.js'
export type { CallGuard } from './engine/engine.js'
export type { IdKind } from './model/context.js'
export type { DraftState } from './live/live.js'
export type { BlobWrite } from './storage/seam.js'
