import type { OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import { allEntries, attachmentsOf } from '../engine/overlay-reads.js'
import type { SessionErrorCode } from '../model/errors.js'
import { jsonEqual } from '../model/json.js'
import { isValidMime, mimeOrOctet } from '../validation/mime.js'
import { SEALED_METADATA_KEY } from '../validation/sealed-records.js'
import type { Commit } from '../engine/changes.js'
import type { AttachmentMeta, SessionEntry, SessionMeta } from '../model/model.js'
import { byCreation, messageAttachmentIds } from '../ops/attachments.js'
import { emitAdded, emitUpdated } from '../engine/emit.js'
import { emitCreated, emitDeleted, emitMetaUpdated, emitStatusChanged } from '../engine/emit-session.js'
import {
  META_FIELDS,
  type MetaField,
  type ReplicaChange,
  type ReplicaPolicy,
  type ReplicaResult,
} from '../model/replica-change.js'

export { META_FIELDS, type MetaField, type ReplicaChange, type ReplicaPolicy, type ReplicaResult }

const rejected = (code: SessionErrorCode, message: string): ReplicaResult => ({
  status: 'rejected',
  code,
  message,
})
const applied: ReplicaResult = { status: 'applied' }
const unchanged: ReplicaResult = { status: 'unchanged' }

export function applyReplica(
  d: Overlay,
  change: ReplicaChange,
  policy: ReplicaPolicy,
  ctx: OpContext,
): ReplicaResult {
  switch (change.type) {
    case 'meta':
      return applyMeta(d, change.meta, change.create === true, change.fields ?? META_FIELDS, policy)
    case 'entry':
      return applyEntry(d, change.session_id, change.entry, change.base_revision, policy, ctx)
    case 'leaf': {
      const head = d.head(change.session_id)
      if (!head)
        return policy === 'push'
          ? rejected('session/not_found', `session ${change.session_id} not found`)
          : unchanged
      if (change.entry_id !== null && !d.entry(change.session_id, change.entry_id)) {
        return policy === 'push'
          ? rejected('session/entry_not_found', `entry ${change.entry_id} not found`)
          : unchanged
      }
      if (head.leaf === change.entry_id) return unchanged
      d.putHead(head.meta, change.entry_id)
      return applied
    }
    case 'delete': {
      const meta = d.meta(change.session_id)
      if (!meta) return unchanged
      d.delete(change.session_id)
      emitDeleted(d, change.session_id, ctx.now(), meta.metadata)
      return applied
    }
    case 'attachment':
      return applyAttachment(d, change.session_id, change.attachment, change.bytes, policy)
    case 'detach':
      return applyDetach(d, change.session_id, change.attachment_id, policy)
    case 'attachments':
      return applyAttachmentList(d, change.session_id, change.attachments, policy)
  }
}

/** The head with a new attachment list; the draft's chips follow (a chip whose attachment went goes too). */
function putAttachments(d: Overlay, session_id: string, list: readonly AttachmentMeta[]): void {
  const head = d.head(session_id)!
  const ids = new Set(list.map((a) => a.attachment_id))
  const chips = head.meta.draft_attachments?.filter((a) => ids.has(a.attachment_id))
  const meta =
    chips?.length === head.meta.draft_attachments?.length
      ? head.meta
      : { ...head.meta, draft_attachments: chips }
  if (meta.draft_attachments?.length === 0) delete (meta as SessionMeta).draft_attachments
  d.putHead(meta, head.leaf, [...list].sort(byCreation))
}

function applyAttachment(
  d: Overlay,
  session_id: string,
  incoming: AttachmentMeta,
  bytes: Blob | undefined,
  policy: ReplicaPolicy,
): ReplicaResult {
  if (!d.head(session_id))
    return policy === 'push' ? rejected('session/not_found', `session ${session_id} not found`) : unchanged
  const held = attachmentsOf(d, session_id)
  const same = held.find((a) => a.attachment_id === incoming.attachment_id)
  if (same)
    return same.sha256 === incoming.sha256
      ? unchanged
      : rejected(
          'session/invalid_request',
          `attachment ${incoming.attachment_id} already exists with other bytes`,
        )
  if (policy === 'push' && !bytes)
    return rejected(
      'session/invalid_request',
      `the bytes of attachment ${incoming.attachment_id} were not uploaded`,
    )
  // A pushed type must pass the mime rule; a pulled one an earlier server stored is kept as bytes.
  if (policy === 'push' && !isValidMime(incoming.mime))
    return rejected(
      'session/invalid_request',
      `attachment ${incoming.attachment_id}: mime is not a media type \`type/subtype\` (RFC 6838)`,
    )
  putAttachments(d, session_id, [
    ...held,
    Object.freeze({ ...incoming, mime: mimeOrOctet(incoming.mime), session_id }),
  ])
  if (bytes) d.blobs.push({ op: 'put', session_id, attachment_id: incoming.attachment_id, bytes })
  return applied
}

function applyDetach(
  d: Overlay,
  session_id: string,
  attachment_id: string,
  policy: ReplicaPolicy,
): ReplicaResult {
  if (!d.head(session_id)) return unchanged
  const held = attachmentsOf(d, session_id)
  if (!held.some((a) => a.attachment_id === attachment_id)) return unchanged
  for (const e of allEntries(d, session_id)) {
    if (e.kind === 'message' && referenced(e).has(attachment_id)) {
      return policy === 'push'
        ? rejected('session/attachment_in_use', `attachment ${attachment_id} is referenced by a message`)
        : unchanged
    }
  }
  putAttachments(
    d,
    session_id,
    held.filter((a) => a.attachment_id !== attachment_id),
  )
  d.blobs.push({ op: 'delete', session_id, attachment_id })
  return applied
}

/** A pulled list: new attachments arrive as metadata (bytes on first read), gone ones leave. */
function applyAttachmentList(
  d: Overlay,
  session_id: string,
  list: readonly AttachmentMeta[],
  policy: ReplicaPolicy,
): ReplicaResult {
  if (policy === 'push')
    return rejected('session/invalid_request', 'an attachment list is pulled, never pushed')
  if (!d.head(session_id)) return unchanged
  const held = attachmentsOf(d, session_id)
  const heldIds = new Map(held.map((a) => [a.attachment_id, a]))
  const nextIds = new Set(list.map((a) => a.attachment_id))
  if (held.length === list.length && list.every((a) => heldIds.get(a.attachment_id)?.sha256 === a.sha256))
    return unchanged
  for (const a of held)
    if (!nextIds.has(a.attachment_id))
      d.blobs.push({ op: 'delete', session_id, attachment_id: a.attachment_id })
  putAttachments(
    d,
    session_id,
    list.map((a) => heldIds.get(a.attachment_id) ?? Object.freeze({ ...a, session_id })),
  )
  return applied
}

/**
 * The draft's chips as this replica holds them: each named attachment's own metadata here, and
 * none it does not hold (its metadata always arrives first; one deleted meanwhile goes), so a
 * draft never points at a missing attachment.
 */
function heldChips(
  d: Overlay,
  session_id: string,
  chips: readonly AttachmentMeta[] | undefined,
): AttachmentMeta[] | undefined {
  if (!chips?.length) return undefined
  const held = new Map(attachmentsOf(d, session_id).map((a) => [a.attachment_id, a]))
  const out = chips.flatMap((c) => held.get(c.attachment_id) ?? [])
  return out.length ? out : undefined
}

function applyMeta(
  d: Overlay,
  incoming: SessionMeta,
  create: boolean,
  fields: readonly MetaField[],
  policy: ReplicaPolicy,
): ReplicaResult {
  const head = d.head(incoming.session_id)
  if (!head) {
    if (policy === 'push' && !create)
      return rejected('session/not_found', `session ${incoming.session_id} not found`)
    // A session new to this replica starts empty: its entries arrive as their own changes and
    // are counted as they land, so message_count always matches the entries held here. It holds
    // no attachments, so its draft keeps the text and no chips.
    const meta: SessionMeta = { ...incoming, message_count: 0 }
    delete meta.draft_attachments
    if (meta.draft === undefined) delete meta.draft
    d.putHead(meta, null)
    emitCreated(d, meta)
    return applied
  }
  const held = head.meta
  const next: SessionMeta =
    policy === 'pull'
      ? {
          ...incoming,
          message_count: held.message_count,
          updated_at: Math.max(held.updated_at, incoming.updated_at),
          draft_attachments: heldChips(d, incoming.session_id, incoming.draft_attachments),
        }
      : { ...held, ...pick(incoming, fields), updated_at: Math.max(held.updated_at, incoming.updated_at) }
  if (policy === 'push') keepNewerSealed(held, next)
  if (policy === 'push' && fields.includes('draft_attachments'))
    next.draft_attachments = heldChips(d, incoming.session_id, incoming.draft_attachments)
  for (const key of ['draft', 'draft_attachments', 'status_reason', 'metadata'] as const)
    if (next[key] === undefined) delete next[key]
  if (jsonEqual(next, held)) return unchanged
  d.putHead(next, head.leaf)
  const timestamp = next.updated_at
  if (
    next.title !== held.title ||
    next.description !== held.description ||
    !jsonEqual(next.metadata, held.metadata)
  ) {
    emitMetaUpdated(d, next, timestamp)
  }
  if (next.status !== held.status || next.status_reason !== held.status_reason) {
    emitStatusChanged(d, next, held.status, timestamp)
  }
  return applied
}

type SealedCounter = { rev: number; box: string }
const counterOf = (v: unknown): SealedCounter | undefined =>
  typeof v === 'object' && v !== null && typeof (v as SealedCounter).rev === 'number'
    ? (v as SealedCounter)
    : undefined

/**
 * A sealed session's meta fields each carry a counter (docs/encryption.md): a field pushed with
 * a lower one than held is older, and the held one stays, as a lower revision of an entry never
 * replaces a higher one. So every replica keeps the highest, whatever order pushes arrive in.
 */
function keepNewerSealed(held: SessionMeta, next: SessionMeta): void {
  const n = next as unknown as Record<string, unknown>
  const h = held as unknown as Record<string, unknown>
  for (const f of ['title', 'description', 'status_reason', 'draft']) {
    const a = counterOf(h[f])
    const b = counterOf(n[f])
    if (a && b && b.rev < a.rev) n[f] = h[f]
  }
  const a = counterOf(held.metadata?.[SEALED_METADATA_KEY])
  const b = counterOf(next.metadata?.[SEALED_METADATA_KEY])
  if (a && b && b.rev < a.rev) n.metadata = held.metadata
}

function pick(meta: SessionMeta, fields: readonly MetaField[]): Partial<SessionMeta> {
  const out: Record<string, unknown> = {}
  // A field named but absent (no status_reason, no metadata) is cleared.
  for (const f of fields) out[f] = meta[f]
  return out as Partial<SessionMeta>
}

// A sealed session's entries (held by a server, docs/encryption.md) carry their content in a
// `box` and the attachments it references in clear: the same rules compare and keep those.
type MessageEntry = SessionEntry & { kind: 'message' }
const boxOf = (e: SessionEntry): string | undefined => (e as { box?: string }).box

/** The attachments a message entry references, clear or sealed. */
const referenced = (e: MessageEntry): Set<string> => {
  const box = boxOf(e)
  return box === undefined
    ? messageAttachmentIds(e.message)
    : new Set((e as { attachment_ids?: string[] }).attachment_ids ?? [])
}

/** Whether two versions of a message entry hold the same content (a sealed one: the same box). */
const sameContent = (a: MessageEntry, b: MessageEntry): boolean =>
  boxOf(a) !== undefined || boxOf(b) !== undefined ? boxOf(a) === boxOf(b) : jsonEqual(a.message, b.message)

function applyEntry(
  d: Overlay,
  session_id: string,
  entry: SessionEntry,
  base: number | null | undefined,
  policy: ReplicaPolicy,
  ctx: OpContext,
): ReplicaResult {
  const head = d.head(session_id)
  if (!head)
    return policy === 'push' ? rejected('session/not_found', `session ${session_id} not found`) : unchanged
  const existing = d.entry(session_id, entry.id)
  if (!existing) {
    if (entry.parent_id !== null && !d.entry(session_id, entry.parent_id)) {
      return rejected(
        'session/parent_not_found',
        `parent ${entry.parent_id} not found in session ${session_id}`,
      )
    }
    d.putEntry(session_id, entry)
    const counted = entry.kind === 'message' ? 1 : 0
    // The order is the parent chain, so the leaf moves only by its own change, never by arrival.
    d.putHead(
      {
        ...head.meta,
        message_count: head.meta.message_count + counted,
        updated_at: Math.max(head.meta.updated_at, entry.timestamp),
      },
      head.leaf,
    )
    emitAdded(d, session_id, entry, head.meta.metadata)
    return applied
  }
  if (existing.kind !== entry.kind || existing.parent_id !== entry.parent_id) {
    return rejected('session/invalid_request', `entry ${entry.id} already exists with another parent or kind`)
  }
  if (existing.kind !== 'message' || entry.kind !== 'message') return unchanged
  if (policy === 'push') {
    // Idempotent retry: the receiver already holds exactly this version.
    if (entry.revision === existing.revision && sameContent(entry, existing)) return unchanged
    if (base !== existing.revision || entry.revision <= existing.revision)
      return { status: 'conflict', current: existing }
  } else if (
    entry.revision < existing.revision ||
    (entry.revision === existing.revision && sameContent(entry, existing))
  ) {
    return unchanged
  }
  // A sealed version is taken whole: its box is bound to its own clear fields.
  const next =
    boxOf(entry) !== undefined ? entry : { ...existing, message: entry.message, revision: entry.revision }
  d.putEntry(session_id, next)
  const now = ctx.now()
  // A server stamps the update with its clock, as update-message does; a pulling client takes
  // the server's meta (updated_at included) from the meta change that follows.
  if (policy === 'push') d.putHead({ ...head.meta, updated_at: now }, head.leaf)
  emitUpdated(d, session_id, next, undefined, now, head.meta.metadata)
  return applied
}

/**
 * A committed batch as replicated changes, in an order another replica can apply: deletions,
 * metas (sessions exist before their entries), entries (parents first, as written), leaf moves.
 * A server's change log and a test double both use this.
 */
export function replicaChangesOf(commit: Commit): ReplicaChange[] {
  const deletes: ReplicaChange[] = []
  const metas: ReplicaChange[] = []
  const entries: ReplicaChange[] = []
  const leaves: ReplicaChange[] = []
  for (const c of commit.changes.values()) {
    if (c.reloaded) continue
    if (c.head === null) deletes.push({ type: 'delete', session_id: c.session_id })
    else if (c.head) {
      metas.push({ type: 'meta', meta: c.head.meta })
      // Attachments before the entries that may reference them.
      metas.push({ type: 'attachments', session_id: c.session_id, attachments: c.head.attachments ?? [] })
      leaves.push({ type: 'leaf', session_id: c.session_id, entry_id: c.head.leaf })
    }
    for (const entry of [...c.added, ...c.updated])
      entries.push({ type: 'entry', session_id: c.session_id, entry })
  }
  return [...deletes, ...metas, ...entries, ...leaves]
}
