import type { OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import { attachmentsOf } from '../engine/overlay-reads.js'
import { emitCreated } from '../engine/emit-session.js'
import type { ForkRequest, ForkResponse, Json, SessionEntry, SessionMeta } from '../model/model.js'
import { pathTo } from '../model/path.js'
import { entryNotFound } from './entries.js'
import { requireMeta } from './lifecycle.js'
import { messageAttachmentIds } from './attachments.js'

/** Custom-entry fields that name other entries and must follow them into a fork. */
function remapCustomData(custom_type: string, data: Json, ids: Map<string, string>): Json {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return data
  const map = (v: Json): Json => (typeof v === 'string' && ids.has(v) ? ids.get(v)! : v)
  if (custom_type === 'compaction' && 'tail_start_entry_id' in data)
    return { ...data, tail_start_entry_id: map(data.tail_start_entry_id) }
  if (custom_type === 'message_order') {
    const out: { [k: string]: Json } = { ...data }
    if ('after' in data) out.after = map(data.after)
    if (Array.isArray(data.moved)) out.moved = data.moved.map(map)
    return out
  }
  return data
}

/**
 * What a fork reads (`OperationSpec.reads`): the path it copies, whose content is sealed again
 * under the new session's ids. The rest of the session stays as it is held.
 */
export function forkReads(d: Overlay, req: ForkRequest): readonly SessionEntry[] {
  if (!d.entry(req.session_id, req.entry_id)) return []
  return pathTo((id) => d.entry(req.session_id, id), req.entry_id)
}

export function fork(d: Overlay, req: ForkRequest, ctx: OpContext): ForkResponse {
  const source = requireMeta(d, req.session_id)
  if (!d.entry(req.session_id, req.entry_id)) throw entryNotFound(req.entry_id)
  const path = pathTo((id) => d.entry(req.session_id, id), req.entry_id)
  const session_id = ctx.newId('session')
  const ids = new Map<string, string>()
  for (const e of path) ids.set(e.id, ctx.newId('entry'))
  let count = 0
  const referenced = new Set<string>()
  for (const e of path) {
    if (e.kind === 'message') messageAttachmentIds(e.message, referenced)
    const copy: SessionEntry =
      e.kind === 'custom' ? { ...e, data: remapCustomData(e.custom_type, e.data, ids) } : (count++, { ...e })
    copy.id = ids.get(e.id)!
    copy.parent_id = e.parent_id === null ? null : ids.get(e.parent_id)!
    copy.revision = 0
    d.putEntry(session_id, copy)
  }
  const now = ctx.now()
  const meta: SessionMeta = {
    session_id,
    title: req.title ?? source.title,
    description: source.description,
    status: 'idle',
    kind: source.kind,
    ...(source.metadata && { metadata: source.metadata }),
    forked_from: source.session_id,
    created_at: now,
    updated_at: now,
    message_count: count,
  }
  // Referenced attachments follow under the same ids (a referenced-but-missing one is skipped);
  // unreferenced uploads and the draft's chips stay behind.
  const copied = attachmentsOf(d, req.session_id)
    .filter((a) => referenced.has(a.attachment_id))
    .map((a) => Object.freeze({ ...a, session_id }))
  for (const a of copied)
    d.blobs.push({ op: 'copy', session_id, attachment_id: a.attachment_id, from_session_id: req.session_id })
  d.putHead(meta, ids.get(req.entry_id)!, copied)
  emitCreated(d, meta)
  return { session_id, meta: d.meta(session_id)! }
}
