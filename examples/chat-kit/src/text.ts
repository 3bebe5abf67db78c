import type { AgentMessage, ContentBlock } from '@colloquy/core'

/** The plain text of a message's text blocks (what an edit box starts from, what the model reads). */
export const textOf = (content: readonly ContentBlock[]): string =>
  content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')

export const messageText = (message: AgentMessage | undefined): string => (message ? textOf(message.content) : '')

/** A session title from its first message: the first line, cut at a word near 48 characters. */
export function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0].replace(/\s+/g, ' ')
  if (line.length <= 48) return line
  const cut = line.slice(0, 48)
  const space = cut.lastIndexOf(' ')
  return `${(space > 24 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** Sessions start untitled (`""`); the first message names them. */
export const displayTitle = (title: string | undefined): string => title?.trim() || 'New chat'
