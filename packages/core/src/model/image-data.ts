import type { AgentMessage, ContentBlock, SessionEntry } from './model.js'

// `include_image_data: false` of the reads by page (fetched on first use).

const hasLinkedImage = (blocks: readonly ContentBlock[]): boolean =>
  blocks.some(
    (b) =>
      (b.type === 'image' && b.attachment_id !== undefined) ||
      (b.type === 'function_result' && hasLinkedImage(b.content)),
  )

const elideBlocks = (blocks: readonly ContentBlock[]): ContentBlock[] =>
  blocks.map((b) =>
    b.type === 'image' && b.attachment_id !== undefined
      ? { ...b, data: '' }
      : b.type === 'function_result' && hasLinkedImage(b.content)
        ? { ...b, content: elideBlocks(b.content) }
        : b,
  )

/** `include_image_data: false`: images that have a stored original come back with `data: ""`. */
export function withoutImageData(message: AgentMessage): AgentMessage {
  return hasLinkedImage(message.content)
    ? ({ ...message, content: elideBlocks(message.content) } as AgentMessage)
    : message
}

export function entryWithoutImageData(entry: SessionEntry): SessionEntry {
  if (entry.kind !== 'message') return entry
  const message = withoutImageData(entry.message)
  return message === entry.message ? entry : { ...entry, message }
}
