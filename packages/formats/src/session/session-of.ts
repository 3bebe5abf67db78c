import type { JsonObject, SessionEntry, SessionImport } from '@colloquy/core'
import { ownTitle, promptTitle } from './title.js'

export interface SessionParts {
  session_id: string
  title?: string
  created_at?: number
  updated_at?: number
  metadata: JsonObject
  entries: SessionEntry[]
  active_leaf: string | null
  forked_from?: string
}

/**
 * A `SessionImport` with its counters and dates filled in, so core never has to derive them
 * (core's fallback spreads every timestamp into `Math.max`, which overflows the stack on big
 * sessions). Untitled sessions (or ones titled with JSON) take the user's first real words.
 */
export function sessionOf(p: SessionParts, now: () => number = Date.now): SessionImport {
  let first = Infinity
  let last = -Infinity
  let messages = 0
  for (const e of p.entries) {
    if (e.timestamp < first) first = e.timestamp
    if (e.timestamp > last) last = e.timestamp
    if (e.kind === 'message') messages++
  }
  const created_at = p.created_at ?? (Number.isFinite(first) ? first : now())
  const updated_at = Math.max(
    created_at,
    p.updated_at ?? created_at,
    Number.isFinite(last) ? last : created_at,
  )
  return {
    meta: {
      session_id: p.session_id,
      title: ownTitle(p.title) ?? promptTitle(p.entries) ?? '',
      description: '',
      status: 'idle',
      kind: 'user',
      metadata: p.metadata,
      ...(p.forked_from !== undefined && { forked_from: p.forked_from }),
      created_at,
      updated_at,
      message_count: messages,
    },
    entries: p.entries,
    active_leaf: p.active_leaf,
  }
}
