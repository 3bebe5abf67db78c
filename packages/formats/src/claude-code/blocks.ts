import type { ContentBlock, FunctionResultBlock } from '@colloquy/core'
import { fromBase64 } from '../input/base64.js'
import { text } from '../session/entries.js'
import type { ImportedAttachment } from '../types.js'
import { arr, isObj, parsed, str } from '../values.js'

/** What block mapping needs from the importer: somewhere to report and to park file bytes. */
export interface BlockContext {
  warn(code: string, message: string): void
  /** Parks file bytes and returns the attachment id a `file` block names. */
  attach(a: Omit<ImportedAttachment, 'session_id' | 'attachment_id'>): string
}

/** Anthropic `image` block → Colloquy image (base64 only; URLs cannot be inlined offline). */
function image(b: Record<string, unknown>, ctx: BlockContext): ContentBlock {
  const source = isObj(b.source) ? b.source : {}
  const data = str(source.data)
  if (source.type === 'base64' && data !== undefined)
    return { type: 'image', mime: str(source.media_type) ?? 'image/png', data }
  const url = str(source.url) ?? ''
  ctx.warn('image-url', `an image given by URL (${url.slice(0, 80)}) is kept as a text link, not inlined`)
  return text(`[image: ${url}]`)
}

function document(b: Record<string, unknown>, ctx: BlockContext): ContentBlock {
  const source = isObj(b.source) ? b.source : {}
  const data = str(source.data) ?? ''
  const mime = str(source.media_type) ?? 'application/octet-stream'
  const name = str(b.title) ?? `document.${mime.split('/')[1] ?? 'bin'}`
  if (source.type === 'text') return text(data)
  if (source.type === 'base64') {
    const bytes = fromBase64(data)
    return {
      type: 'file',
      attachment_id: ctx.attach({ name, mime, data: bytes }),
      name,
      mime,
      size: bytes.byteLength,
    }
  }
  ctx.warn('document-source', `a document with source type ${String(source.type)} is kept as JSON text`)
  return text(JSON.stringify(b))
}

/** Content of a `tool_result`: a string or text/image/tool_reference blocks. */
export function resultContent(content: unknown, ctx: BlockContext): ContentBlock[] {
  if (typeof content === 'string') return [text(content)]
  const out: ContentBlock[] = []
  for (const b of arr(content)) {
    if (!isObj(b)) continue
    if (b.type === 'text') out.push(text(str(b.text) ?? ''))
    else if (b.type === 'image') out.push(image(b, ctx))
    else if (b.type === 'document') out.push(document(b, ctx))
    // A deferred-tool pointer: the name is all it carries.
    else if (b.type === 'tool_reference') out.push(text(`[tool reference: ${str(b.tool_name) ?? ''}]`))
    else out.push(unknown(b, ctx))
  }
  return out
}

function unknown(b: Record<string, unknown>, ctx: BlockContext): ContentBlock {
  ctx.warn(
    'unknown-block',
    `a content block of type ${String(b.type)} has no Colloquy equivalent; kept as JSON text`,
  )
  return text(JSON.stringify(b))
}

/**
 * One Anthropic content block → Colloquy. `tool_result` is handled by the caller (it becomes
 * its own `function_result` entry) except inside assistant messages, where server tools put
 * their results inline.
 */
export function block(b: unknown, ctx: BlockContext): ContentBlock | undefined {
  if (!isObj(b)) return undefined
  switch (b.type) {
    case 'text':
      return text(str(b.text) ?? '')
    case 'thinking': {
      const signature = str(b.signature)
      return signature === undefined
        ? { type: 'thinking', text: str(b.thinking) ?? '' }
        : { type: 'thinking', text: str(b.thinking) ?? '', signature }
    }
    case 'redacted_thinking':
      // Encrypted reasoning: no text to show, but the opaque data must go back to the API.
      return { type: 'thinking', text: '', signature: str(b.data) ?? '' }
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use':
      return {
        type: 'function_call',
        id: str(b.id) ?? '',
        function_id: str(b.name) ?? '',
        arguments: parsed(b.input),
      }
    case 'image':
      return image(b, ctx)
    case 'document':
      return document(b, ctx)
    case 'tool_result':
    case 'web_search_tool_result':
    case 'web_fetch_tool_result':
    case 'mcp_tool_result':
    case 'code_execution_tool_result': {
      const r: FunctionResultBlock = {
        type: 'function_result',
        function_call_id: str(b.tool_use_id) ?? '',
        content:
          isObj(b.content) && !Array.isArray(b.content)
            ? [text(JSON.stringify(b.content))]
            : resultContent(b.content, ctx),
      }
      if (b.is_error === true) r.is_error = true
      return r
    }
    default:
      return unknown(b, ctx)
  }
}
