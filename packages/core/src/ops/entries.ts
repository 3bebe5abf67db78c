import type { OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import type {
  AgentMessage,
  AppendRequest,
  AppendResponse,
  Json,
  SessionEntry,
  SessionMeta,
  UpdateMessageRequest,
  UpdateMessageResponse,
} from '../model/model.js'
import { SessionError } from '../model/errors.js'
import { emitAdded, emitUpdated } from '../engine/emit.js'
import { notFound } from './lifecycle.js'
import { NO_ENTRIES } from './reads-no-content.js'

// Fetched on first use (prefetched once the first screen's entries are loaded): what writing a
// transcript needs, and no page needs to show one.

export const entryNotFound = (entry_id: string): SessionError =>
  new SessionError('session/entry_not_found', `entry ${entry_id} not found`)

export function requireParent(d: Overlay, session_id: string, parent_id: string): void {
  if (!d.entry(session_id, parent_id))
    throw new SessionError(
      'session/parent_not_found',
      `parent ${parent_id} not found in session ${session_id}`,
    )
}

export { readsNoContent } from './reads-no-content.js'

export function append(d: Overlay, req: AppendRequest, ctx: OpContext): AppendResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  if ((req.message == null) === (req.custom == null)) {
    throw new SessionError('session/invalid_request', 'exactly one of message or custom is required')
  }
  if (req.entry_id != null) {
    // Idempotency precedes parent validation: a replay is a no-op whatever parent it names.
    const existing = d.entry(req.session_id, req.entry_id)
    if (existing)
      return { entry_id: existing.id, parent_id: existing.parent_id, timestamp: existing.timestamp }
  }
  if (req.parent_id != null) requireParent(d, req.session_id, req.parent_id)
  const now = ctx.now()
  const id = req.entry_id ?? ctx.newId('entry')
  const parent_id = req.parent_id ?? head.leaf
  // Assigned in key order rather than spread from a partial record: a burst builds 10,000 in a row.
  const record: Record<string, unknown> = { id, parent_id, timestamp: now, revision: 0 }
  if (req.origin) record.origin = req.origin
  if (req.message) {
    record.kind = 'message'
    record.message = req.message
  } else {
    record.kind = 'custom'
    record.custom_type = req.custom!.custom_type
    record.data = req.custom!.data
  }
  const entry = record as unknown as SessionEntry
  d.putEntry(req.session_id, entry)
  const meta: SessionMeta = {
    ...head.meta,
    updated_at: now,
    message_count: head.meta.message_count + (entry.kind === 'message' ? 1 : 0),
  }
  d.putHead(meta, entry.id)
  emitAdded(d, req.session_id, entry, meta.metadata)
  return { entry_id: entry.id, parent_id: entry.parent_id, timestamp: now }
}

/**
 * What an edit reads (`OperationSpec.reads`): the content of the message it rewrites, which the
 * new revision keeps but for `content` (its role, kind and revision are clear). A custom entry is
 * refused from its clear kind: nothing is opened for it.
 */
export function updateMessageReads(d: Overlay, req: UpdateMessageRequest): readonly SessionEntry[] {
  const entry = d.entry(req.session_id, req.entry_id)
  return entry?.kind === 'message' ? [entry] : NO_ENTRIES
}

export function updateMessage(d: Overlay, req: UpdateMessageRequest, ctx: OpContext): UpdateMessageResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  const entry = d.entry(req.session_id, req.entry_id)
  if (!entry) throw entryNotFound(req.entry_id)
  if (entry.kind !== 'message')
    throw new SessionError(
      'session/invalid_entry_kind',
      `entry ${req.entry_id} is a custom entry, not a message`,
    )
  if (req.expected_revision != null && req.expected_revision !== entry.revision)
    return { updated: false, revision: entry.revision }
  const role = entry.message.role
  if (req.usage != null && role !== 'assistant')
    throw new SessionError(
      'session/invalid_entry_kind',
      `usage is only accepted on assistant messages, not ${role}`,
    )
  if ((req.stop_reason != null || req.error_message != null) && role !== 'assistant') {
    throw new SessionError(
      'session/invalid_entry_kind',
      `a stop reason or error message is only accepted on assistant messages, not ${role}`,
    )
  }
  if (req.details !== undefined && (role === 'user' || role === 'assistant')) {
    throw new SessionError('session/details_not_supported', `details are not supported on ${role} messages`)
  }
  const message = { ...entry.message, content: req.content } as AgentMessage
  if (message.role === 'assistant') {
    if (req.usage != null) message.usage = req.usage
    if (req.stop_reason != null) message.stop_reason = req.stop_reason
    if (req.error_message != null) message.error_message = req.error_message
  }
  if (req.details !== undefined && (message.role === 'function_result' || message.role === 'custom'))
    message.details = req.details as Json
  const now = ctx.now()
  const updated = { ...entry, message: Object.freeze(message), revision: entry.revision + 1 }
  d.putEntry(req.session_id, updated)
  d.putHead({ ...head.meta, updated_at: now }, head.leaf)
  emitUpdated(d, req.session_id, updated, req.origin ?? undefined, now, head.meta.metadata)
  return { updated: true, revision: updated.revision }
}
