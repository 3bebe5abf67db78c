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

/**
 * Every live session's meta, this batch's changes included; over a storage with paged reads,
 * the sessions read for the operation (`Overlay.listed`) with this batch's changes laid over.
 */
export function metas(d: Overlay): SessionMeta[] {
  if (d.listed) return laidOver(d, d.listed)
  const out: SessionMeta[] = []
  if (d.base) {
    for (const m of metas(d.base)) if (!d.heads.has(m.session_id) && !d.deleted.has(m.session_id)) out.push(m)
  } else
    for (const [id, s] of d.state.sessions) if (!d.heads.has(id) && !d.deleted.has(id)) out.push(s.head.meta)
  for (const h of d.heads.values()) out.push(h.meta)
  return out
}

/** `listed` with the writes of `d` and the overlays under it: the nearest change of a session wins. */
function laidOver(d: Overlay, listed: readonly SessionMeta[]): SessionMeta[] {
  const changed = new Map<string, SessionMeta | null>()
  for (let o: Overlay | undefined = d; o; o = o.base) {
    for (const [id, h] of o.heads) if (!changed.has(id)) changed.set(id, h.meta)
    for (const id of o.deleted) if (!changed.has(id)) changed.set(id, null)
  }
  const out = listed.filter((m) => !changed.has(m.session_id))
  for (const m of changed.values()) if (m) out.push(m)
  return out
}

/** The session's attachment metadata, this batch's changes included. */
export const attachmentsOf = (d: Overlay, session_id: string): readonly AttachmentMeta[] =>
  d.head(session_id)?.attachments ?? []
