// `@colloquy/core/replica`: the replica rules' helpers for sync clients and servers.
export {
  replicaChangesOf,
  META_FIELDS,
  type MetaField,
  type ReplicaChange,
  type ReplicaResult,
  type ReplicaPolicy,
} from './replica.js'
export { replicaChange as parseReplicaChange } from '../validation/records.js'
export type { CheckedReplicaChange } from '../validation/checked-change.js'
