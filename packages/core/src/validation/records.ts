import { markChecked, type CheckedReplicaChange } from './checked-change.js'
import { META_FIELDS, type MetaField, type ReplicaChange } from '../model/replica-change.js'
import { KINDS, STATUSES, type AttachmentMeta, type SessionEntry, type SessionMeta } from '../model/model.js'
import { agentMessage } from './schemas.js'
import {
  blob,
  bool,
  bounded,
  int,
  lit,
  name,
  object,
  opt,
  req,
  storedMime,
  tagged,
  uint,
} from './record-parsers.js'
import { array, id, json, jsonObject, oneOf, str, type Parser } from './validate.js'
import {
  isSealedRecord,
  sealedEntryUnder,
  sealedMetaUnder,
  storedSealedAttachment,
} from './sealed-records.js'

// Stored records as importers and replication hand them over, and replicated changes: what an
// app that never syncs or imports does not load.

/** A stored entry, as importers and replication hand them over. */
export const sessionEntry: Parser<SessionEntry> = tagged('kind', {
  message: object({
    id: req(id),
    parent_id: opt(id, null),
    timestamp: req(int),
    revision: opt(uint, 0),
    origin: opt(jsonObject),
    kind: lit('message'),
    message: req(agentMessage),
  }),
  custom: object({
    id: req(id),
    parent_id: opt(id, null),
    timestamp: req(int),
    revision: opt(uint, 0),
    origin: opt(jsonObject),
    kind: lit('custom'),
    custom_type: req(name),
    data: opt(json, null),
  }),
})

const attachmentFields = {
  attachment_id: req(id),
  session_id: req(id),
  name: req(name),
  size: req(uint),
  sha256: req(name),
  created_at: req(int),
}
/**
 * An AttachmentMeta as data already held carries it (a pulled list, a draft's chips, a stored
 * meta): a mime written before the mime rule reads as `application/octet-stream`, never fails a
 * read. Its bytes are served with that type.
 */
export const attachmentMeta: Parser<AttachmentMeta> = object({ ...attachmentFields, mime: req(storedMime) })
/**
 * An AttachmentMeta that adds an attachment (an `attachment` change): its mime is kept as sent
 * (bounded), for `applyReplica` to refuse a bad one pushed (`isValidMime`) and read a pulled one,
 * written by an earlier server, as `application/octet-stream`.
 */
const newAttachmentMeta: Parser<AttachmentMeta> = object({ ...attachmentFields, mime: req(name) })

// A replicated change may carry a sealed session's records (end-to-end encrypted sync,
// docs/encryption.md): the same change, its clear fields checked with the same rules, its
// content in boxes. A server holds them as the records of that session and never reads inside
// them (features that need plaintext refuse sealed sessions); a client opens them before its
// store sees them. Typed as the clear records they stand for: only a server holds them so.

/** An entry of a replicated change: clear, or sealed. */
const replicaEntry: Parser<SessionEntry> = (v, p) =>
  isSealedRecord(v) ? (sealedEntryUnder(v, p) as unknown as SessionEntry) : sessionEntry(v, p)

/** An attachment of a replicated change: clear, or sealed (an opaque blob to the server). */
const replicaAttachment =
  (clear: Parser<AttachmentMeta>): Parser<AttachmentMeta> =>
  (v, p) =>
    isSealedRecord(v)
      ? (Object.freeze({
          ...storedSealedAttachment(v, p),
          name: '',
          mime: 'application/octet-stream',
        }) as AttachmentMeta)
      : clear(v, p)

/** A whole session meta (imports, replication). Missing counters and dates are the caller's to fill. */
export const sessionMeta: Parser<SessionMeta> = object({
  session_id: req(id),
  title: opt(str, ''),
  description: opt(str, ''),
  status: opt(oneOf(STATUSES), 'idle'),
  status_reason: opt(str),
  kind: opt(oneOf(KINDS), 'user'),
  metadata: opt(jsonObject),
  forked_from: opt(id),
  draft: opt(str),
  draft_attachments: opt(array(attachmentMeta)),
  created_at: req(int),
  updated_at: opt(int),
  message_count: opt(uint, 0),
})

/** A meta, clear or sealed. */
const storedMeta: Parser<SessionMeta> = (v, p) =>
  isSealedRecord(v) ? (sealedMetaUnder(v, p) as unknown as SessionMeta) : sessionMeta(v, p)

/** A meta as replication carries it: a missing `updated_at` is its `created_at`. */
const replicaMeta: Parser<SessionMeta> = (v, p) => {
  const meta = storedMeta(v, p)
  return meta.updated_at === undefined ? Object.freeze({ ...meta, updated_at: meta.created_at }) : meta
}

const changeParser: Parser<ReplicaChange> = tagged<ReplicaChange>('type', {
  meta: (v, p) => {
    const c = object<{ meta: SessionMeta; create?: boolean; fields?: MetaField[] }>({
      type: lit('meta'),
      meta: req(replicaMeta),
      create: opt(bool),
      fields: opt(array(oneOf(META_FIELDS))),
    })(v, p)
    return {
      type: 'meta',
      meta: c.meta,
      ...(c.create === true && { create: true }),
      ...(c.fields && { fields: c.fields }),
    }
  },
  entry: (v, p) => {
    const c = object<{ session_id: string; entry: SessionEntry; base_revision?: number }>({
      type: lit('entry'),
      session_id: req(id),
      entry: req(replicaEntry),
      base_revision: opt(uint),
    })(v, p)
    return { type: 'entry', session_id: c.session_id, entry: c.entry, base_revision: c.base_revision ?? null }
  },
  leaf: (v, p) => {
    const c = object<{ session_id: string; entry_id?: string }>({
      type: lit('leaf'),
      session_id: req(id),
      entry_id: opt(id),
    })(v, p)
    return { type: 'leaf', session_id: c.session_id, entry_id: c.entry_id ?? null }
  },
  delete: (v, p) => ({
    type: 'delete',
    session_id: object<{ session_id: string }>({ type: lit('delete'), session_id: req(id) })(v, p).session_id,
  }),
  // On the wire an attachment change carries metadata only (the bytes are uploaded apart); in
  // process the server hands the uploaded bytes along with it.
  attachment: (v, p) => {
    const c = object<{ session_id: string; attachment: AttachmentMeta; bytes?: Blob }>({
      type: lit('attachment'),
      session_id: req(id),
      attachment: req(replicaAttachment(newAttachmentMeta)),
      bytes: opt(blob),
    })(v, p)
    return {
      type: 'attachment',
      session_id: c.session_id,
      attachment: c.attachment,
      ...(c.bytes && { bytes: c.bytes }),
    }
  },
  attachments: (v, p) => {
    const c = object<{ session_id: string; attachments: AttachmentMeta[] }>({
      type: lit('attachments'),
      session_id: req(id),
      attachments: req(array(replicaAttachment(attachmentMeta))),
    })(v, p)
    return { type: 'attachments', session_id: c.session_id, attachments: c.attachments }
  },
  detach: (v, p) => {
    const c = object<{ session_id: string; attachment_id: string }>({
      type: lit('detach'),
      session_id: req(id),
      attachment_id: req(id),
    })(v, p)
    return { type: 'detach', session_id: c.session_id, attachment_id: c.attachment_id }
  },
})

/**
 * One replicated change (a push a server receives, a pull a client applies, `applyReplica`):
 * the same id, name and depth bounds as requests. The result is checked (`CheckedReplicaChange`):
 * `applyReplica` takes it without validating it again.
 */
export const replicaChange = (v: unknown, p: string): CheckedReplicaChange => markChecked(boundedChange(v, p))
const boundedChange: Parser<ReplicaChange> = bounded(changeParser)

export const parseSessionEntry = bounded(sessionEntry)
export const parseSessionMeta = bounded(sessionMeta)
export const parseAttachmentMeta = bounded(attachmentMeta)

// What a server's storage reads back: the records it holds, clear or sealed (a sealed
// session's, as its replicated changes carried them). Imports and a client's own store use the
// clear checks above.
export const parseStoredEntry = bounded(replicaEntry)
export const parseStoredMeta = bounded(storedMeta)
export const parseStoredAttachmentMeta = bounded(replicaAttachment(attachmentMeta))
