import type { ContentBlock, Json, SessionEntry } from '../model/model.js'

export interface TextOptions {
  /** Index thinking blocks too (default false: they are the model's, rarely what a person looks for). */
  readonly thinking: boolean
}

function jsonText(value: Json, out: string[]): void {
  if (typeof value === 'string') out.push(value)
  else if (typeof value === 'number' || typeof value === 'boolean') out.push(String(value))
  else if (Array.isArray(value)) for (const v of value) jsonText(v, out)
  else if (value)
    for (const [k, v] of Object.entries(value)) {
      out.push(k)
      jsonText(v, out)
    }
}

function blocksText(blocks: readonly ContentBlock[], options: TextOptions, out: string[]): void {
  for (const b of blocks) {
    if (b.type === 'text') out.push(b.text)
    else if (b.type === 'thinking') {
      if (options.thinking) out.push(b.text)
    } else if (b.type === 'function_call') {
      out.push(b.function_id)
      jsonText(b.arguments, out)
    } else if (b.type === 'function_result') blocksText(b.content, options, out)
    else if (b.type === 'file') out.push(b.name)
  }
}

/**
 * The searchable text of an entry (null for a custom entry): text blocks, tool calls' names and
 * arguments, tool results, file names, thinking when asked. Indexing, phrase checks and snippets
 * all read this one text, so a highlight always lands on what was indexed.
 */
export function entryText(entry: SessionEntry, options: TextOptions): string | null {
  if (entry.kind !== 'message') return null
  const out: string[] = []
  if (entry.message.role === 'function_result') out.push(entry.message.function_id)
  blocksText(entry.message.content, options, out)
  return out.join('\n')
}
