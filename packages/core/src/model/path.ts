import { SessionError } from './errors.js'
import type { SessionEntry } from './model.js'

/**
 * Root → `leaf` along `parent_id`. The parent chain is the order; a missing parent or a cycle is
 * corruption and surfaces as `session/storage`, never as a silently shortened transcript.
 */
export function pathTo(lookup: (id: string) => SessionEntry | undefined, leaf: string): SessionEntry[] {
  const out: SessionEntry[] = []
  const seen = new Set<string>()
  let id: string | null = leaf
  while (id !== null) {
    if (seen.has(id)) throw new SessionError('session/storage', `cycle in the parent chain at ${id}`)
    seen.add(id)
    const entry = lookup(id)
    if (!entry) throw new SessionError('session/storage', `missing entry ${id} in the parent chain`)
    out.push(entry)
    id = entry.parent_id
  }
  return out.reverse()
}
