import {
  KINDS,
  ROLES,
  STATUSES,
  type JsonObject,
  type Role,
  type SessionKind,
  type SessionStatus,
} from '../model/model.js'
import { SessionError } from '../model/errors.js'
import { bounded, int, lit, object, opt, req, tagged, uint } from '../validation/record-parsers.js'
import { array, id, jsonObject, oneOf, str, type Parser } from '../validation/validate.js'

// The stored forms of sealed records, and their checks. Records arrive from IndexedDB, another
// tab or a server: hostile until checked, like clear ones. Only what the tree, the active leaf,
// revisions, ordering, list filters and tenancy need is clear (docs/encryption.md says why, field
// by field); everything else is in `box`es.

/** A sealed value with the counter its associated data binds (meta fields change in place). */
export interface SealedField {
  rev: number
  box: string
}

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
  box: string
}
/** A custom entry: `custom_type`, `data` and `origin` sealed in `box`. */
export interface SealedCustomEntry extends SealedEntryBase {
  kind: 'custom'
  box: string
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

const entryBase = {
  id: req(id),
  parent_id: opt(id, null),
  timestamp: req(int),
  revision: req(uint),
  box: req(str),
}

export const sealedEntry: Parser<SealedEntry> = bounded(
  tagged<SealedEntry>('kind', {
    message: object({
      ...entryBase,
      kind: lit('message'),
      role: req(oneOf(ROLES)),
      attachment_ids: opt(array(id)),
    }),
    custom: object({ ...entryBase, kind: lit('custom') }),
  }),
)

export const sealedAttachmentMeta: Parser<SealedAttachmentMeta> = bounded(
  object({ attachment_id: req(id), session_id: req(id), created_at: req(int), box: req(str) }),
)

const sealedMetadata: Parser<JsonObject> = (v, p) => {
  const o = jsonObject(v, p)
  sealedField(o[SEALED_METADATA_KEY], `${p}.${SEALED_METADATA_KEY}`)
  return o
}

export const sealedMeta: Parser<SealedMeta> = bounded(
  object({
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
  }),
)

/**
 * Runs a record check; a record that fails it is `session/integrity` (a stored or received
 * record is not what a writer holding the keys sealed), with the check's own words.
 */
export function checked<T>(parser: Parser<T>, value: unknown, path: string): T {
  try {
    return parser(value, path)
  } catch (e) {
    if (e instanceof SessionError)
      throw new SessionError('session/integrity', e.message.replace(/^session\/[a-z_]+: /, ''), { cause: e })
    throw e
  }
}
