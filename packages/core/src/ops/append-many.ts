import type { OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import { emitAdded } from '../engine/emit.js'
import { SessionError } from '../model/errors.js'
import { requireParent } from './entries.js'

export { readsNoContent } from './entries.js'
import { notFound } from './lifecycle.js'
import type { AppendManyRequest, AppendManyResponse, SessionEntry, SessionMeta } from '../model/model.js'

// Fetched on first use: a chat app appends one message at a time.

export function appendMany(d: Overlay, req: AppendManyRequest, ctx: OpContext): AppendManyResponse {
  const head = d.head(req.session_id)
  if (!head) throw notFound(req.session_id)
  if (req.messages.length === 0) throw new SessionError('session/empty_batch', 'messages must not be empty')
  if (req.parent_id != null) requireParent(d, req.session_id, req.parent_id)
  const now = ctx.now()
  let parent = req.parent_id ?? head.leaf
  const added: SessionEntry[] = req.messages.map((message) => {
    const entry: SessionEntry = {
      id: ctx.newId('entry'),
      parent_id: parent,
      timestamp: now,
      revision: 0,
      ...(req.origin && { origin: req.origin }),
      kind: 'message',
      message,
    }
    parent = entry.id
    return entry
  })
  for (const e of added) d.putEntry(req.session_id, e)
  const meta: SessionMeta = {
    ...head.meta,
    updated_at: now,
    message_count: head.meta.message_count + added.length,
  }
  d.putHead(meta, parent)
  for (const e of added) emitAdded(d, req.session_id, e, meta.metadata)
  return { entry_ids: added.map((e) => e.id), last_entry_id: parent! }
}
