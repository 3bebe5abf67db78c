import type { ReplicaChange, ReplicaResult } from '@colloquy/core'

/** A client mutation as pushed: its outbox key (for acknowledgement) and the change. */
export interface PushMutation {
  readonly id: number
  readonly change: ReplicaChange
}

export interface PushRequest {
  readonly client_id: string
  readonly mutations: readonly PushMutation[]
}

/**
 * One result per mutation, in order. `seq` (optional: older servers omit it): the position in
 * the server's log of the newest record of what the mutation sets (its entry, meta or leaf) once
 * it was applied. A server change for that key at a lower `seq` is older than this mutation and
 * superseded by it; one at that `seq` or above is as new or newer.
 */
export interface PushResponse {
  readonly results: ReadonlyArray<{ readonly id: number; readonly seq?: number } & ReplicaResult>
}

/** A committed change with the server's sequence number. */
export interface SequencedChange {
  readonly seq: number
  readonly change: ReplicaChange
}

export interface PullResponse {
  readonly changes: readonly SequencedChange[]
  /** The checkpoint to pull from next time (the last seq of this page, or the request's). */
  readonly checkpoint: number
  /** The server's newest seq when this page was read. */
  readonly head: number
  readonly more: boolean
  /** The server log's incarnation (a server that can outlive its clients' cursors sends it). */
  readonly epoch?: string
  /** The cursor cannot be served (too old, another epoch, ahead of the server): resync from 0. */
  readonly reset?: boolean
}

/** What the live stream sends: the same changes as pull, as they commit. */
export type StreamMessage =
  /**
   * `prev`: the seq of the last change this connection sent before these (its `since` at first).
   * `checkpoint`: where a client may resume, past records the server skipped as not its own.
   */
  | { readonly type: 'changes'; readonly changes: readonly SequencedChange[]; readonly prev: number; readonly checkpoint?: number; readonly head: number }
  /** The backlog from `since` has been sent; live changes follow. */
  | { readonly type: 'ready'; readonly checkpoint?: number; readonly head: number; readonly epoch?: string }
  /** The cursor cannot be served: the client resyncs in full (the server then sends from 0). */
  | { readonly type: 'reset'; readonly checkpoint: 0; readonly head: number; readonly epoch?: string }
