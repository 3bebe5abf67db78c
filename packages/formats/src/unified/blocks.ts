import type { ContentBlock, FunctionResultBlock } from '@colloquy/core'
import { text } from '../session/entries.js'
import { arr, isObj, str, toJson, type Obj } from '../values.js'

// Content blocks of the unified agent-history schema 1.0: `text`, `tool_use {tool_id,
// tool_name, input}` and `tool_result {tool_id, tool_name, output, is_error}`. What 1.0 has
// no block for is written in the shapes its 2.0 design and the Anthropic API use (`thinking`,
// `image`, `file`), so other readers still recognise them; `tool_result.content` keeps
// non-text result content. Both directions live here so they stay each other's inverse.

export function toUnifiedBlock(b: ContentBlock, toolName?: string): Obj {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text }
    case 'function_call':
      return { type: 'tool_use', tool_id: b.id, tool_name: b.function_id, input: b.arguments }
    case 'thinking':
      return b.signature === undefined
        ? { type: 'thinking', thinking: b.text }
        : { type: 'thinking', thinking: b.text, signature: b.signature }
    case 'image':
      return {
        type: 'image',
        source: { type: 'base64', media_type: b.mime, data: b.data },
        ...(b.attachment_id !== undefined && { attachment_id: b.attachment_id }),
      }
    case 'file':
      return { type: 'file', attachment_id: b.attachment_id, name: b.name, mime: b.mime, size: b.size }
    case 'function_result':
      return toolResult(b.function_call_id, toolName, b.content, b.is_error)
  }
}

/** `output` is the plain text; `content` is added only when text alone would lose something. */
export function toolResult(
  id: string,
  name: string | undefined,
  content: readonly ContentBlock[],
  isError: boolean | undefined,
): Obj {
  const out: Obj = {
    type: 'tool_result',
    tool_id: id,
    tool_name: name ?? null,
    output: content.map((c) => (c.type === 'text' ? c.text : '')).join('\n'),
  }
  // Result messages always say; an inline result block may leave it unsaid, and stays so.
  if (isError !== undefined) out.is_error = isError
  if (!(content.length === 1 && content[0].type === 'text'))
    out.content = content.map((c) => toUnifiedBlock(c))
  return out
}

/** A unified block back to Colloquy; `undefined` for what is not a block (reported by the caller). */
export function fromUnifiedBlock(b: unknown): ContentBlock | undefined {
  if (!isObj(b)) return undefined
  switch (b.type) {
    case 'text':
      return text(str(b.text) ?? '')
    case 'tool_use':
      return {
        type: 'function_call',
        id: str(b.tool_id) ?? str(b.id) ?? '',
        function_id: str(b.tool_name) ?? str(b.name) ?? '',
        arguments: toJson(b.input ?? null),
      }
    case 'thinking':
    case 'reasoning': {
      const t = str(b.thinking) ?? str(b.text) ?? ''
      const signature = str(b.signature)
      return signature === undefined
        ? { type: 'thinking', text: t }
        : { type: 'thinking', text: t, signature }
    }
    case 'image': {
      const source = isObj(b.source) ? b.source : {}
      const attachment_id = str(b.attachment_id)
      return {
        type: 'image',
        mime: str(source.media_type) ?? 'image/png',
        data: str(source.data) ?? '',
        ...(attachment_id !== undefined && { attachment_id }),
      }
    }
    case 'file':
      return {
        type: 'file',
        attachment_id: str(b.attachment_id) ?? '',
        name: str(b.name) ?? '',
        mime: str(b.mime) ?? 'application/octet-stream',
        size: typeof b.size === 'number' ? b.size : 0,
      }
    case 'tool_result': {
      const r: FunctionResultBlock = {
        type: 'function_result',
        function_call_id: str(b.tool_id) ?? str(b.tool_use_id) ?? '',
        content: resultContent(b),
      }
      if (typeof b.is_error === 'boolean') r.is_error = b.is_error
      return r
    }
    default:
      return undefined
  }
}

export function resultContent(b: Obj): ContentBlock[] {
  if (Array.isArray(b.content))
    return arr(b.content)
      .map(fromUnifiedBlock)
      .filter((x): x is ContentBlock => x !== undefined)
  return [text(typeof b.output === 'string' ? b.output : JSON.stringify(b.output ?? ''))]
}
