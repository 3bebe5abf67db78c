import type { AgentMessage } from '@colloquy/core'
import { textOf } from '@colloquy/parts'

// The text helpers the framework adapters also need live in @colloquy/parts.
export { textOf, titleFrom } from '@colloquy/parts'

export const messageText = (message: AgentMessage | undefined): string =>
  message ? textOf(message.content) : ''

/** Sessions start untitled (`""`); the first message names them. */
export const displayTitle = (title: string | undefined): string => title?.trim() || 'New chat'
