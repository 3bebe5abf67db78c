// The replicated change: what sync pushes and pulls, and what every replica answers for it. Its
// rules are in `replica/replica.ts`; its check is in `validation/records.ts`.
import type { SessionErrorCode } from './errors.js'
import type { AttachmentMeta, SessionEntry, SessionMeta } from './model.js'

/**
 * A replicated change: the state-based unit that sync pushes to a server and pulls back. Every
 * replica (browser store, server) applies them with the same rules, here.
 */
export type ReplicaChange =
  /**
   * A session's meta. `create` marks the change that brought the session into existence: only
   * such a change may create it on a server, so an edit made while another device deleted the
   * session is refused instead of bringing the session back.
   */
  | {
      readonly type: 'meta'
      readonly meta: SessionMeta
      readonly create?: boolean
      readonly fields?: readonly MetaField[]
    }
  | {
      readonly type: 'entry'
      readonly session_id: string
      readonly entry: SessionEntry
      /** Pushes only: the revision the writer based this version on (`null` for a new entry). */
      readonly base_revision?: number | null
    }
  | { readonly type: 'leaf'; readonly session_id: string; readonly entry_id: string | null }
  | { readonly type: 'delete'; readonly session_id: string }
  /**
   * One new attachment (pushes, and a server's change log in pulls). A server takes it only with
   * its bytes, which travel apart from the JSON push (`bytes`, in process only): an attachment is
   * on the server before any change that references it is pushed after it.
   */
  | {
      readonly type: 'attachment'
      readonly session_id: string
      readonly attachment: AttachmentMeta
      readonly bytes?: Blob
    }
  /** An attachment deleted (pushes, and pulls); a push is refused while a message references it. */
  | { readonly type: 'detach'; readonly session_id: string; readonly attachment_id: string }
  /** A session's whole attachment list, metadata only (pulls): bytes are fetched on first read. */
  | {
      readonly type: 'attachments'
      readonly session_id: string
      readonly attachments: readonly AttachmentMeta[]
    }

/** The session a change belongs to (a meta change names it inside its meta). */
export const changeSession = (c: ReplicaChange): string =>
  c.type === 'meta' ? c.meta.session_id : c.session_id

/**
 * The meta fields a writer edits. A pushed meta change names the ones it changed, so two devices
 * that edit different fields of one session offline (one renames, one marks it done) both keep
 * their edit; counters and `updated_at` are each replica's own.
 */
export const META_FIELDS = [
  'title',
  'description',
  'metadata',
  'status',
  'status_reason',
  'draft',
  'draft_attachments',
] as const
export type MetaField = (typeof META_FIELDS)[number]

export type ReplicaResult =
  | { readonly status: 'applied' }
  | { readonly status: 'unchanged' }
  /** The base moved on: `current` is the receiver's version. */
  | { readonly status: 'conflict'; readonly current: SessionEntry }
  | { readonly status: 'rejected'; readonly code: SessionErrorCode; readonly message: string }

/**
 * `push`: a server receiving a client's changes. Entry versions are accepted only on top of the
 * base they were made from; the server owns counters and its clock.
 * `pull`: a client receiving the server's changes. The server is authoritative, except that a
 * replica never goes back to a lower revision of an entry (its own newer version is pending and
 * will be pushed).
 */
export type ReplicaPolicy = 'push' | 'pull'
