import type {
  AgentMessage,
  ContentBlock,
  CustomEntry,
  Json,
  JsonObject,
  MessageEntry,
  TextBlock,
} from '@colloquy/core'

// Entries start as roots; `TreeBuilder.build` (or the linear importers) set `parent_id`.

export function messageEntry(id: string, message: AgentMessage, origin?: JsonObject): MessageEntry {
  const e: MessageEntry = {
    id,
    parent_id: null,
    timestamp: message.timestamp,
    revision: 0,
    kind: 'message',
    message,
  }
  if (origin) e.origin = origin
  return e
}

export function customEntry(id: string, timestamp: number, custom_type: string, data: Json): CustomEntry {
  return { id, parent_id: null, timestamp, revision: 0, kind: 'custom', custom_type, data }
}

export const text = (t: string): TextBlock => ({ type: 'text', text: t })

/** The text of blocks, for titles, OPA strings and unified `output` fields. */
export function plainText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = []
  for (const b of blocks) {
    if (b.type === 'text') parts.push(b.text)
    else if (b.type === 'function_result') parts.push(plainText(b.content))
  }
  return parts.join('\n')
}

/** Chains entries in order (for formats without a tree): each one's parent is the previous. */
export function chain<T extends { id: string; parent_id: string | null }>(
  entries: T[],
  parent: string | null = null,
): T[] {
  for (const e of entries) {
    e.parent_id = parent
    parent = e.id
  }
  return entries
}
