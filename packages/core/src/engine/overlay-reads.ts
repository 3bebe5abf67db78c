import type { Overlay } from './overlay.js'
import type { AttachmentMeta, SessionEntry, SessionMeta } from '../model/model.js'

// Reads through a overlay that only operations fetched on first use make (listing, attachments,
// forks, replication): kept out of `Overlay`, whose class every app loads.

/** Every entry of a session on every branch, this batch's included (entries must be loaded). */
export function* allEntries(d: Overlay, session_id: string): Generator<SessionEntry> {
  const own = d.entries.get(session_id)
  if (own) yield* own.values()
  if (d.deleted.has(session_id)) return
  for (const e of d.base
    ? allEntries(d.base, session_id)
    : (d.state.sessions.get(session_id)?.entries?.values() ?? []))
    if (!own?.has(e.id)) yield e
}

/** Every live session's meta, this batch's changes included. */
export function metas(d: Overlay): SessionMeta[] {
  const out: SessionMeta[] = []
  if (d.base) {
    for (const m of metas(d.base)) if (!d.heads.has(m.session_id) && !d.deleted.has(m.session_id)) out.push(m)
  } else
    for (const [id, s] of d.state.sessions) if (!d.heads.has(id) && !d.deleted.has(id)) out.push(s.head.meta)
  for (const h of d.heads.values()) out.push(h.meta)
  return out
}

/** The session's attachment metadata, this batch's changes included. */
export const attachmentsOf = (d: Overlay, session_id: string): readonly AttachmentMeta[] =>
  d.head(session_id)?.attachments ?? []
