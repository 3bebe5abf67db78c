import type { Overlay } from '../engine/overlay.js'
import { SessionError } from '../model/errors.js'
import type { SessionMeta } from '../model/model.js'

export const notFound = (session_id: string): SessionError =>
  new SessionError('session/not_found', `session ${session_id} not found`)

/** The meta of a live session, or `session/not_found`. */
export function requireMeta(d: Overlay, session_id: string): SessionMeta {
  const meta = d.meta(session_id)
  if (!meta) throw notFound(session_id)
  return meta
}
