import type { Overlay } from '../engine/overlay.js'
import type { SetActiveLeafRequest, SetActiveLeafResponse } from '../model/model.js'
import { entryNotFound } from './entries.js'

export { readsNoContent } from './entries.js'
import { requireMeta } from './lifecycle.js'

// Fetched on first use: what a branch picker calls.

export function setActiveLeaf(d: Overlay, req: SetActiveLeafRequest): SetActiveLeafResponse {
  const meta = requireMeta(d, req.session_id)
  if (!d.entry(req.session_id, req.entry_id)) throw entryNotFound(req.entry_id)
  d.putHead(meta, req.entry_id)
  return { active_leaf: req.entry_id }
}
