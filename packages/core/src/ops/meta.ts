import type { OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import { emitDeleted, emitMetaUpdated, emitStatusChanged } from '../engine/emit-session.js'
import type {
  DeleteRequest,
  DeleteResponse,
  SessionMeta,
  SetMetaRequest,
  SetMetaResponse,
  SetStatusRequest,
  SetStatusResponse,
} from '../model/model.js'
import { notFound } from './lifecycle.js'

export function remove(d: Overlay, req: DeleteRequest, ctx: OpContext): DeleteResponse {
  const meta = d.meta(req.session_id)
  if (!meta) return { deleted: false }
  d.delete(req.session_id)
  emitDeleted(d, req.session_id, ctx.now(), meta.metadata)
  return { deleted: true }
}

export function setMeta(d: Overlay, req: SetMetaRequest, ctx: OpContext): SetMetaResponse {
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

export function setStatus(d: Overlay, req: SetStatusRequest, ctx: OpContext): SetStatusResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  const previous = head.meta.status
  // The current rule: a reason is kept for working/done/error and dropped for idle; a change
  // of either status or reason is a real change.
  const reason = req.status === 'idle' ? undefined : (req.reason ?? undefined)
  if (previous === req.status && head.meta.status_reason === reason)
    return { status: previous, previous_status: previous }
  const now = ctx.now()
  const { status_reason: _dropped, ...rest } = head.meta
  const meta: SessionMeta = {
    ...rest,
    status: req.status,
    ...(reason !== undefined && { status_reason: reason }),
    updated_at: now,
  }
  d.putHead(meta, head.leaf)
  emitStatusChanged(d, meta, previous, now)
  return { status: req.status, previous_status: previous }
}
