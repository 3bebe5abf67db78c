import type { OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import { allEntries, attachmentsOf } from '../engine/overlay-reads.js'
import { SessionError } from '../model/errors.js'
import { notFound } from './lifecycle.js'
import { sealedRecordOf } from '../model/sealed-entry.js'
import type {
  AgentMessage,
  AttachmentMeta,
  ContentBlock,
  DeleteAttachmentRequest,
  DeleteAttachmentResponse,
  GetAttachmentRequest,
  GetAttachmentResponse,
  ListAttachmentsRequest,
  ListAttachmentsResponse,
  PutAttachmentResponse,
  SessionMeta,
  SetDraftRequest,
  SetDraftResponse,
} from '../model/model.js'

/**
 * A put-attachment request once its bytes were checked and hashed (outside the batch: hashing is
 * asynchronous, and the contract checks name, base64 and size before the session).
 */
export interface PreparedAttachment {
  readonly session_id: string
  readonly name: string
  readonly mime: string
  readonly size: number
  readonly sha256: string
  readonly bytes: Blob
}

/** The contract's order: by `created_at`, then by id. */
export const byCreation = (a: AttachmentMeta, b: AttachmentMeta): number =>
  a.created_at - b.created_at ||
  (a.attachment_id < b.attachment_id ? -1 : a.attachment_id > b.attachment_id ? 1 : 0)

/** Attachment ids a block list points at: `file` blocks and linked images, inside results too. */
export function collectAttachmentIds(
  blocks: readonly ContentBlock[],
  into: Set<string> = new Set(),
): Set<string> {
  for (const b of blocks) {
    if (b.type === 'file') into.add(b.attachment_id)
    else if (b.type === 'image' && b.attachment_id !== undefined) into.add(b.attachment_id)
    else if (b.type === 'function_result') collectAttachmentIds(b.content, into)
  }
  return into
}

export const messageAttachmentIds = (message: AgentMessage, into?: Set<string>): Set<string> =>
  collectAttachmentIds(message.content, into)

/**
 * Whether any message entry of the session, on any branch, references `attachment_id`. An entry
 * an encrypted store holds sealed answers from its stored record's clear `attachment_ids` (bound
 * in its box, checked against the content when it is opened: docs/encryption.md), so the check
 * opens nothing (`readsNoContent`).
 */
function inUse(d: Overlay, session_id: string, attachment_id: string): boolean {
  for (const e of allEntries(d, session_id)) {
    if (e.kind !== 'message') continue
    const sealed = sealedRecordOf(e)
    if (
      sealed
        ? sealed.attachment_ids?.includes(attachment_id)
        : messageAttachmentIds(e.message).has(attachment_id)
    )
      return true
  }
  return false
}

export { readsNoContent } from './reads-no-content.js'

/** The meta with the draft fields set as given (omitted when empty, as the contract serializes). */
function withDraft(
  meta: SessionMeta,
  draft: string | undefined,
  attachments: readonly AttachmentMeta[] | undefined,
): SessionMeta {
  const { draft: _d, draft_attachments: _a, ...rest } = meta
  const out: SessionMeta = { ...rest }
  if (draft !== undefined) out.draft = draft
  if (attachments?.length) out.draft_attachments = [...attachments]
  return out
}

export function putAttachment(d: Overlay, req: PreparedAttachment, ctx: OpContext): PutAttachmentResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  const attachment: AttachmentMeta = Object.freeze({
    attachment_id: ctx.newId('attachment'),
    session_id: req.session_id,
    name: req.name,
    mime: req.mime,
    size: req.size,
    sha256: req.sha256,
    created_at: ctx.now(),
  })
  const list = attachmentsOf(d, req.session_id).filter((a) => a.attachment_id !== attachment.attachment_id)
  // Same meta, same updated_at: only the internal version moves, so other tabs reload the list.
  d.putHead(head.meta, head.leaf, [...list, attachment].sort(byCreation))
  d.blobs.push({
    op: 'put',
    session_id: req.session_id,
    attachment_id: attachment.attachment_id,
    bytes: req.bytes,
  })
  return {
    attachment,
    block: {
      type: 'file',
      attachment_id: attachment.attachment_id,
      name: attachment.name,
      mime: attachment.mime,
      size: attachment.size,
    },
  }
}

/** The metadata half of get-attachment; the store adds the bytes when they were asked for. */
export function getAttachment(d: Overlay, req: GetAttachmentRequest): GetAttachmentResponse {
  const attachment = attachmentsOf(d, req.session_id).find((a) => a.attachment_id === req.attachment_id)
  return attachment ? { attachment, data: null } : null
}

export function listAttachments(d: Overlay, req: ListAttachmentsRequest): ListAttachmentsResponse {
  if (!d.head(req.session_id)) throw notFound(req.session_id)
  return { attachments: [...attachmentsOf(d, req.session_id)] }
}

export function deleteAttachment(d: Overlay, req: DeleteAttachmentRequest): DeleteAttachmentResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  const list = attachmentsOf(d, req.session_id)
  if (!list.some((a) => a.attachment_id === req.attachment_id)) return { deleted: false }
  if (inUse(d, req.session_id, req.attachment_id)) {
    throw new SessionError(
      'session/attachment_in_use',
      `attachment ${req.attachment_id} is referenced by a message`,
    )
  }
  const parked = head.meta.draft_attachments
  const meta = parked?.some((a) => a.attachment_id === req.attachment_id)
    ? withDraft(
        head.meta,
        head.meta.draft,
        parked.filter((a) => a.attachment_id !== req.attachment_id),
      )
    : head.meta
  d.putHead(
    meta,
    head.leaf,
    list.filter((a) => a.attachment_id !== req.attachment_id),
  )
  d.blobs.push({ op: 'delete', session_id: req.session_id, attachment_id: req.attachment_id })
  return { deleted: true }
}

export function setDraft(d: Overlay, req: SetDraftRequest): SetDraftResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  // Omitted, null, empty or blank text clears it; anything else is kept exactly as typed.
  const text = req.draft != null && req.draft.trim() !== '' ? req.draft : undefined
  let parked = head.meta.draft_attachments ?? []
  if (req.attachment_ids != null) {
    const stored = new Map(attachmentsOf(d, req.session_id).map((a) => [a.attachment_id, a]))
    const seen = new Set<string>()
    const next: AttachmentMeta[] = []
    for (const id of req.attachment_ids) {
      if (seen.has(id)) continue
      seen.add(id)
      const a = stored.get(id)
      if (!a)
        throw new SessionError(
          'session/invalid_request',
          `attachment ${id} not found in session ${req.session_id}`,
        )
      next.push(a)
    }
    parked = next
  }
  const before = head.meta.draft_attachments ?? []
  const same =
    head.meta.draft === text &&
    before.length === parked.length &&
    before.every((a, i) => a.attachment_id === parked[i].attachment_id)
  // Keystroke cadence: never an event, never an updated_at bump, and no write when nothing changed.
  if (!same) d.putHead(withDraft(head.meta, text, parked), head.leaf)
  return { draft: text ?? null, attachments: [...parked] }
}
