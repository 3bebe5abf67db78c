import type { OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import { SessionError } from '../model/errors.js'
import { emitCreated } from '../engine/emit-session.js'
import type {
  CreateRequest,
  CreateResponse,
  EnsureRequest,
  EnsureResponse,
  SessionMeta,
} from '../model/model.js'

// Fetched on first use (prefetched right after open): a transcript can be shown and continued
// before any session is created.

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

export function create(d: Overlay, req: CreateRequest, ctx: OpContext): CreateResponse {
  const meta = freshMeta(ctx.newId('session'), req, ctx.now())
  d.putHead(meta, null)
  emitCreated(d, meta)
  return { session_id: meta.session_id, meta: d.meta(meta.session_id)! }
}

export function ensure(d: Overlay, req: EnsureRequest, ctx: OpContext): EnsureResponse {
  if (req.session_id === '') throw new SessionError('session/invalid_request', 'session_id must not be empty')
  const existing = d.meta(req.session_id)
  if (existing) return { session_id: req.session_id, meta: existing, created: false }
  const meta = freshMeta(req.session_id, req, ctx.now())
  d.putHead(meta, null)
  emitCreated(d, meta)
  return { session_id: req.session_id, meta: d.meta(req.session_id)!, created: true }
}
