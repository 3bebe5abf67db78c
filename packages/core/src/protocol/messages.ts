import type { ReplicaChange, ReplicaResult } from '../model/replica-change.js'

/**
 * The sync protocol's messages, as the server sends and accepts them and the client reads and
 * writes them (`packages/server/README.md` describes the endpoints). One declaration for both
 * sides: each message has its runtime check beside it in this folder.
 */

/**
 * A mutation's id: the client's own key for it (an outbox key), echoed in its result. A safe
 * integer, or a string within the id bounds (at most 255 UTF-8 bytes, well-formed).
 */
export type MutationId = number | string

/** One client mutation: its id and the replicated change. */
export interface PushMutation {
  readonly id: MutationId
  readonly change: ReplicaChange
}

/** `POST /sync/push` (and the stream's `push`). `client_id` is informational. */
export interface PushRequest {
  readonly client_id?: string
  readonly mutations: readonly PushMutation[]
}

/**
 * One mutation's result. `seq` (on `applied` and `unchanged` results of an entry, meta or leaf
 * change; optional, older servers omit it): the position in the server's log of the newest
 * record of what the mutation sets, read after it was applied. A server change for that key at
 * a lower `seq` is older than the mutation; one at that `seq` or above is as new or newer.
 */
export type PushResult = { readonly id: MutationId; readonly seq?: number } & ReplicaResult

/** The push answer: one result per mutation, in the order of the request. */
export interface PushResponse {
  readonly results: readonly PushResult[]
}

/** A committed change with the server's sequence number. */
export interface SequencedChange {
  readonly seq: number
  readonly change: ReplicaChange
}

/** `GET /sync/pull?since=&limit=&epoch=`. */
export interface PullResponse {
  readonly changes: readonly SequencedChange[]
  /** Where to pull from next: the last record looked at, or the head once the log is read through. */
  readonly checkpoint: number
  /** The server's newest seq when this page was read. */
  readonly head: number
  readonly more: boolean
  /** The log's incarnation (a log that can outlive its clients' cursors sends it). */
  readonly epoch?: string
  /**
   * The cursor cannot be served (too old, another epoch, ahead of the log): the page is empty at
   * checkpoint 0 and the client resyncs from 0.
   */
  readonly reset?: boolean
}

/** What a stream request's answer echoes as its `id`: whatever JSON value the request carried (or none). */
export type RequestId = unknown

/** A refusal as the server words it (`id` names a server failure in its log). */
export interface WireError {
  readonly code: string
  readonly message: string
  readonly id?: string
}

/** What `GET /sync/stream` sends. */
export type StreamMessage =
  /**
   * Changes in `seq` order. `prev`: the seq of the last change this connection sent before these
   * (the request's `since` at first); a client whose checkpoint is below it missed something.
   * `checkpoint`: where a client may resume (it also covers records skipped as not the caller's).
   */
  | {
      readonly type: 'changes'
      readonly changes: readonly SequencedChange[]
      readonly prev: number
      readonly checkpoint: number
      readonly head: number
    }
  /** The backlog from `since` has been sent; live changes follow. */
  | { readonly type: 'ready'; readonly checkpoint: number; readonly head: number; readonly epoch?: string }
  /** The cursor cannot be served: the client resyncs in full (the server then sends from 0). */
  | { readonly type: 'reset'; readonly checkpoint: 0; readonly head: number; readonly epoch?: string }
  /** The answer to a `push` sent on this socket. */
  | { readonly type: 'pushed'; readonly id: RequestId; readonly results: readonly PushResult[] }
  /** The answer to a `ping`, after everything sent before it. */
  | { readonly type: 'pong'; readonly id: RequestId }
  /** A refused message (`retry_after_ms`: the request rate was exceeded; wait that long). */
  | {
      readonly type: 'error'
      readonly id?: RequestId
      readonly error: WireError
      readonly retry_after_ms?: number
    }

/** What a client may send on the stream. */
export type StreamRequest =
  | { readonly type: 'ping'; readonly id?: RequestId }
  | ({ readonly type: 'push'; readonly id?: RequestId } & PushRequest)
