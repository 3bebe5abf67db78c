import type { OpContext } from '../context.js'
import type { Draft } from '../draft.js'
import { SessionError } from '../errors.js'
import { emitCreated, emitDeleted, emitMetaUpdated, emitStatusChanged } from '../emit.js'
import type {
  CreateRequest, CreateResponse, DeleteRequest, DeleteResponse, EnsureRequest, EnsureResponse,
  SessionMeta, SetMetaRequest, SetMetaResponse, SetStatusRequest, SetStatusResponse,
} from '../model.js'

export const notFound = (session_id: string): SessionError => new SessionError('session/not_found', `session ${session_id} not found`)

/** The meta of a live session, or `session/not_found`. */
export function requireMeta(d: Draft, session_id: string): SessionMeta {
  const meta = d.meta(session_id)
  if (!meta) throw notFound(session_id)
  return meta
}

/** The shape every new session starts with (create, ensure). */
export function freshMeta(session_id: string, req: CreateRequest, now: number): SessionMeta {
  const meta: SessionMeta = {
    session_id,
    title: req.title ?? '',
    description: req.description ?? '',
    status: 'idle',
    kind: req.kind ?? 'user',
    created_at: now,
    updated_at: now,
    message_count: 0,
  }
  if (req.metadata) meta.metadata = req.metadata
  return meta
}

export function create(d: Draft, req: CreateRequest, ctx: OpContext): CreateResponse {
  const meta = freshMeta(ctx.newId('session'), req, ctx.now())
  d.putHead(meta, null)
  emitCreated(d, meta)
  return { session_id: meta.session_id, meta: d.meta(meta.session_id)! }
}

export function ensure(d: Draft, req: EnsureRequest, ctx: OpContext): EnsureResponse {
  if (req.session_id === '') throw new SessionError('session/invalid_request', 'session_id must not be empty')
  const existing = d.meta(req.session_id)
  if (existing) return { session_id: req.session_id, meta: existing, created: false }
  const meta = freshMeta(req.session_id, req, ctx.now())
  d.putHead(meta, null)
  emitCreated(d, meta)
  return { session_id: req.session_id, meta: d.meta(req.session_id)!, created: true }
}

export function remove(d: Draft, req: DeleteRequest, ctx: OpContext): DeleteResponse {
  const meta = d.meta(req.session_id)
  if (!meta) return { deleted: false }
  d.delete(req.session_id)
  emitDeleted(d, req.session_id, ctx.now(), meta.metadata)
  return { deleted: true }
}

export function setMeta(d: Draft, req: SetMetaRequest, ctx: OpContext): SetMetaResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  if (req.title == null && req.description == null && req.metadata == null) return { meta: head.meta }
  const now = ctx.now()
  const meta: SessionMeta = { ...head.meta, updated_at: now }
  if (req.title != null) meta.title = req.title
  if (req.description != null) meta.description = req.description
  if (req.metadata != null) meta.metadata = req.metadata
  d.putHead(meta, head.leaf)
  emitMetaUpdated(d, meta, now)
  return { meta: d.meta(req.session_id)! }
}

export function setStatus(d: Draft, req: SetStatusRequest, ctx: OpContext): SetStatusResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  const previous = head.meta.status
  // The current rule: a reason is kept for working/done/error and dropped for idle; a change
  // of either status or reason is a real change.
  const reason = req.status === 'idle' ? undefined : (req.reason ?? undefined)
  if (previous === req.status && head.meta.status_reason === reason) return { status: previous, previous_status: previous }
  const now = ctx.now()
  const { status_reason: _dropped, ...rest } = head.meta
  const meta: SessionMeta = { ...rest, status: req.status, ...(reason !== undefined && { status_reason: reason }), updated_at: now }
  d.putHead(meta, head.leaf)
  emitStatusChanged(d, meta, previous, now)
  return { status: req.status, previous_status: previous }
}
