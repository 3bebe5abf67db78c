import type { AgentMessage, ReplicaChange, SessionEntry } from '@colloquy/core'
import type { EncryptionPolicy, Keyring } from '@colloquy/core/crypto'
import type { HttpTransportOptions, Transport } from './transport.js'

export type SyncState = 'offline' | 'connecting' | 'syncing' | 'idle' | 'error'

export interface SyncStatus {
  readonly state: SyncState
  /** Local changes not yet acknowledged by the server. */
  readonly pending: number
  readonly last_synced_at?: number
  readonly error?: string
  /** Whether this tab is the one replicating (the others show its status). */
  readonly leader: boolean
}

/** An update the server refused because its base moved on, and how it was settled. */
export interface Conflict {
  readonly session_id: string
  readonly entry_id: string
  readonly local: SessionEntry
  readonly server: SessionEntry
  /** What both replicas hold now, at a revision above both versions. */
  readonly resolved: SessionEntry
}

/** A change the server refused for good; kept until the app acknowledges it. */
export interface Rejection {
  readonly id: number
  readonly change: ReplicaChange
  readonly code: string
  readonly message: string
  readonly at: number
}

/**
 * A change from the server refused because it does not open (end-to-end encryption): a flipped
 * byte, a value moved to another entry, session or field, an older value replayed under a newer
 * revision, a clear record where a sealed one belongs, or a key this keyring lacks. Nothing of it
 * was applied; syncing went on with the rest.
 */
export interface IntegrityFailure {
  /** Where the change sat in the server's log (absent for an attachment's bytes or a push answer). */
  readonly seq?: number
  readonly session_id: string
  /** The change's type (`entry`, `meta`, `attachments`…), or `attachment` for bytes. */
  readonly change: string
  /** The entry or attachment id, when it names one. */
  readonly id?: string
  readonly code: 'session/integrity'
  readonly message: string
  readonly at: number
}

export interface SyncOptions extends HttpTransportOptions {
  /**
   * End-to-end encryption: every change is sealed under this keyring before it is sent and
   * opened after it arrives, so the server holds ciphertext only (docs/encryption.md). A change
   * that does not open is refused and reported on `integrity$`.
   */
  keyring?: Keyring
  /**
   * With `keyring`: the metadata keys left clear (default `['owner']`, the key a server's
   * tenancy scopes sessions by). Every device of a user must use the same policy.
   */
  policy?: EncryptionPolicy
  /** Overrides the HTTP/WebSocket transport (tests, custom channels). */
  transport?: Transport
  /**
   * Picks the message to keep when an update conflicts; `undefined` keeps the server's (the
   * default). The choice is written at a revision above both versions and pushed.
   */
  resolveConflict?: (conflict: {
    session_id: string
    entry_id: string
    local: SessionEntry
    server: SessionEntry
  }) => AgentMessage | undefined | Promise<AgentMessage | undefined>
  /** Outbox records per push request; default 500. */
  batchSize?: number
  /** Changes per pull page; default 1000. */
  pullLimit?: number
  /**
   * Download attachment bytes as soon as their metadata is pulled, instead of on first read
   * (default false): for devices that must show every image offline later. `flush()` resolves
   * once those downloads have ended.
   */
  eagerAttachments?: boolean
  now?: () => number
}
