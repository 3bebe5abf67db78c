// What the protocol takes from the rest of core, in one place: core's files are being laid out
// in folders, and a move then changes these paths only.
export { SessionError } from '../errors.js'
export { isValidId } from '../limits.js'
export { replicaChange as parseReplicaChange, parseSessionEntry } from '../records.js'
export type { CheckedReplicaChange } from '../checked-change.js'
export type { ReplicaChange, ReplicaResult } from '../replica.js'
