import {
  KINDS,
  ROLES,
  STATUSES,
  type JsonObject,
  type Role,
  type SessionKind,
  type SessionStatus,
} from '../model/model.js'
import { bounded, int, lit, object, opt, req, tagged, uint } from './record-parsers.js'
import { array, id, jsonObject, oneOf, str, type Parser } from './validate.js'

// The stored forms of sealed records (docs/encryption.md), and their checks. Records arrive from
// IndexedDB, another tab or a server: hostile until checked, like clear ones. Here, beside the
// clear records' checks, because a replicated change may carry either (`records.ts`): a server
// validates, orders and reconciles sealed sessions with the same one validator. Only what the tree, the active leaf,
// revisions, ordering, list filters and tenancy need is clear (docs/encryption.md says why, field
// by field); everything else is in `box`es.

/** A sealed value with the counter its associated data binds (meta fields change in place). */
export interface SealedField {
  rev: number
  box: string
}

/**
 * An entry's sealed content: base64 text in JSON (the wire, a server's storage), bytes (an
 * ArrayBuffer) at rest in a browser's storage, a third smaller, read and written as they are
 * (docs/encryption.md).
 */
export type EntryBox = string | ArrayBuffer

interface SealedEntryBase {
  id: string
  parent_id: string | null
  timestamp: number
  revision: number
}
/** A message entry: the message (less its role) and `origin` sealed in `box`. */
export interface SealedMessageEntry extends SealedEntryBase {
  kind: 'message'
  role: Role
  /** The attachments its content references, so a server can refuse deleting one in use. */
  attachment_ids?: string[]
  box: EntryBox
}
/** A custom entry: `custom_type`, `data` and `origin` sealed in `box`. */
export interface SealedCustomEntry extends SealedEntryBase {
  kind: 'custom'
  box: EntryBox
}
export type SealedEntry = SealedMessageEntry | SealedCustomEntry

/** An attachment's metadata: name, mime, size and sha256 of the plaintext sealed in `box`. */
export interface SealedAttachmentMeta {
  attachment_id: string
  session_id: string
  created_at: number
  box: string
}

/** The key of a sealed meta's `metadata` that holds the sealed part; the other keys are clear. */
export const SEALED_METADATA_KEY = '$sealed'

export interface SealedMeta {
  session_id: string
  status: SessionStatus
  kind: SessionKind
  forked_from?: string
  created_at: number
  updated_at: number
  message_count: number
  title: SealedField
  description: SealedField
  status_reason?: SealedField
  /** The app's declared clear keys as they are, and `$sealed`: the other keys, sealed together. */
  metadata?: JsonObject
  draft?: SealedField
  draft_attachments?: SealedAttachmentMeta[]
}

const sealedField: Parser<SealedField> = object({ rev: req(uint), box: req(str) })

/** An entry's box: text, or bytes (JSON never holds bytes: only a browser's storage hands them over). */
const entryBox: Parser<EntryBox> = (v, p) => (v instanceof ArrayBuffer ? v : str(v, p))

const entryBase = {
  id: req(id),
  parent_id: opt(id, null),
  timestamp: req(int),
  revision: req(uint),
  box: req(entryBox),
}

/**
 * A sealed entry's check without the depth bound, for parsers that wear it already (`records.ts`:
 * a replicated change or a stored record is walked once, not once more for its entry).
 */
export const sealedEntryUnder: Parser<SealedEntry> = tagged<SealedEntry>('kind', {
  message: object({
    ...entryBase,
    kind: lit('message'),
    role: req(oneOf(ROLES)),
    attachment_ids: opt(array(id)),
  }),
  custom: object({ ...entryBase, kind: lit('custom') }),
})
export const sealedEntry: Parser<SealedEntry> = bounded(sealedEntryUnder)

export const sealedAttachmentMeta: Parser<SealedAttachmentMeta> = bounded(
  object({ attachment_id: req(id), session_id: req(id), created_at: req(int), box: req(str) }),
)

const sealedMetadata: Parser<JsonObject> = (v, p) => {
  const o = jsonObject(v, p)
  sealedField(o[SEALED_METADATA_KEY], `${p}.${SEALED_METADATA_KEY}`)
  return o
}

/** A sealed meta's check without the depth bound (as `sealedEntryUnder`). */
export const sealedMetaUnder: Parser<SealedMeta> = object({
  session_id: req(id),
  status: req(oneOf(STATUSES)),
  kind: req(oneOf(KINDS)),
  forked_from: opt(id),
  created_at: req(int),
  updated_at: req(int),
  message_count: req(uint),
  title: req(sealedField),
  description: req(sealedField),
  status_reason: opt(sealedField),
  metadata: opt(sealedMetadata),
  draft: opt(sealedField),
  draft_attachments: opt(array(sealedAttachmentMeta)),
})
export const sealedMeta: Parser<SealedMeta> = bounded(sealedMetaUnder)

/**
 * A sealed attachment as a server holds it: the sealed metadata, and the size and sha256 of the
 * stored bytes (the envelope, not the plaintext), which the server checks an upload against and
 * stores the bytes by. As an `AttachmentMeta` its name is empty and its type
 * `application/octet-stream`: to the server it is an opaque blob.
 */
export const storedSealedAttachment: Parser<SealedAttachmentMeta & { size: number; sha256: string }> = object(
  {
    attachment_id: req(id),
    session_id: req(id),
    created_at: req(int),
    box: req(str),
    size: req(uint),
    sha256: req(str),
  },
)

/**
 * Whether a record a replicated change carries claims its sealed form (it has a `box`, or a title
 * that is not text): then it is checked as one, and refused with the sealed form's words.
 */
export const isSealedRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  (Object.prototype.hasOwnProperty.call(v, 'box') ||
    (typeof (v as { title?: unknown }).title === 'object' && (v as { title?: unknown }).title !== null))
