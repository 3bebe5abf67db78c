export { createSync, type Sync } from './sync.js'
export type { SyncOptions, SyncStatus, SyncState, Conflict, Rejection } from './types.js'
export { httpTransport, TransportError, type Transport, type HttpTransportOptions } from './transport.js'
export { mirrorHistory, type Mirror, type MirrorOptions } from './mirror.js'
