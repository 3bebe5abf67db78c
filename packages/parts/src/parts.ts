import type { ContentBlock, FunctionCallBlock, FunctionResultBlock, Json, JsonObject } from '@colloquy/core'

/**
 * A message part as chat frameworks see one, whatever the framework: assistant-ui's and the AI
 * SDK's parts both map onto these, so the Colloquy side of the mapping is written once.
 */
export type NeutralPart = TextPart | ReasoningPart | ToolPart | FilePart | ExtraPart

export interface TextPart {
  readonly type: 'text'
  readonly text: string
}
export interface ReasoningPart {
  readonly type: 'reasoning'
  readonly text: string
  readonly signature?: string
}

/**
 * A tool call with its result folded in. `output` is what a UI shows: the result's text when it
 * is one text block, its blocks otherwise. `resultEntryId` names the `function_result` entry the
 * result came from; without it the result is a `function_result` block inside the message.
 */
export interface ToolPart {
  readonly type: 'tool'
  readonly toolCallId: string
  readonly toolName: string
  readonly input: Json
  /** Absent when the result is not in (yet). `flagless`: the block had no `is_error` (absent and `false` stay apart). */
  readonly result?: { readonly output: Json; readonly isError: boolean; readonly flagless?: true }
  readonly resultEntryId?: string
  /** `false` for a result whose call is not in the message (an orphan result entry). */
  readonly hasCall?: false
}

/** An image (`kind: 'image'`, bytes inline as a data URL) or a stored file (no bytes, a reference). */
export interface FilePart {
  readonly type: 'file'
  readonly kind: 'image' | 'file'
  readonly mediaType: string
  readonly url: string
  readonly filename?: string
  readonly attachmentId?: string
  readonly size?: number
}

/**
 * A part Colloquy has no block for (`data-*`, sources, a result block out of place…), kept
 * verbatim in the shape the AI SDK gives it (`{ type, … }`), so a round trip returns it.
 */
export interface ExtraPart {
  readonly type: 'extra'
  readonly part: JsonObject
}

/** The URL scheme of a stored file: the bytes stay in Colloquy's attachment store. */
export const ATTACHMENT_SCHEME = 'colloquy-attachment:'

/** The extra part type that holds a Colloquy block no neutral part stands for. */
export const BLOCK_DATA_PART = 'data-colloquy-block'

const dataUrl = (mime: string, data: string): string => `data:${mime};base64,${data}`

/** Splits a `data:<mime>;base64,<data>` URL; null for anything else. */
export function parseDataUrl(url: string): { mime: string; data: string } | null {
  const m = /^data:([^;,]*);base64,(.*)$/s.exec(url)
  return m ? { mime: m[1], data: m[2] } : null
}

/** What a tool part shows for a result's content: one text block is its text, else the blocks. */
export const outputOf = (content: readonly ContentBlock[]): Json =>
  content.length === 1 && content[0].type === 'text' ? content[0].text : (content as unknown as Json)

const isBlockList = (v: Json): v is Json[] =>
  Array.isArray(v) &&
  v.every((b) => typeof b === 'object' && b !== null && !Array.isArray(b) && typeof b.type === 'string')

/** The inverse of `outputOf`; an output a framework produced in another shape becomes its JSON text. */
export const contentOfOutput = (output: Json): ContentBlock[] =>
  typeof output === 'string'
    ? [{ type: 'text', text: output }]
    : isBlockList(output)
      ? (output as unknown as ContentBlock[])
      : [{ type: 'text', text: JSON.stringify(output) }]

/**
 * A message's blocks as neutral parts. A `function_result` block right after its call is folded
 * into the call's tool part; one anywhere else is kept as a `data-colloquy-block` extra.
 */
export function blocksToParts(blocks: readonly ContentBlock[]): NeutralPart[] {
  const out: NeutralPart[] = []
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]
    switch (b.type) {
      case 'text':
        out.push({ type: 'text', text: b.text })
        break
      case 'thinking':
        out.push(
          b.signature === undefined
            ? { type: 'reasoning', text: b.text }
            : { type: 'reasoning', text: b.text, signature: b.signature },
        )
        break
      case 'image':
        out.push({
          type: 'file',
          kind: 'image',
          mediaType: b.mime,
          url: dataUrl(b.mime, b.data),
          ...(b.attachment_id !== undefined && { attachmentId: b.attachment_id }),
        })
        break
      case 'file':
        out.push({
          type: 'file',
          kind: 'file',
          mediaType: b.mime,
          url: `${ATTACHMENT_SCHEME}${b.attachment_id}`,
          filename: b.name,
          attachmentId: b.attachment_id,
          size: b.size,
        })
        break
      case 'function_call': {
        const next = blocks[i + 1]
        const result = next?.type === 'function_result' && next.function_call_id === b.id ? next : undefined
        if (result) i++
        out.push({
          type: 'tool',
          toolCallId: b.id,
          toolName: b.function_id,
          input: b.arguments,
          ...(result && {
            result: {
              output: outputOf(result.content),
              isError: result.is_error === true,
              ...(result.is_error === undefined && { flagless: true as const }),
            },
          }),
        })
        break
      }
      case 'function_result':
        out.push({ type: 'extra', part: { type: BLOCK_DATA_PART, data: b as unknown as Json } })
        break
    }
  }
  return out
}

/**
 * The inverse of `blocksToParts` for a message's own content: tool results that came from a
 * `function_result` entry (`resultEntryId`) stay out (they go back to that entry), extras stay
 * out except the blocks they hold (the caller keeps the other extras elsewhere).
 */
export function partsToBlocks(parts: readonly NeutralPart[]): ContentBlock[] {
  const out: ContentBlock[] = []
  for (const p of parts) {
    switch (p.type) {
      case 'text':
        out.push({ type: 'text', text: p.text })
        break
      case 'reasoning':
        out.push(
          p.signature === undefined
            ? { type: 'thinking', text: p.text }
            : { type: 'thinking', text: p.text, signature: p.signature },
        )
        break
      case 'file': {
        if (p.kind === 'file' && p.attachmentId !== undefined) {
          out.push({
            type: 'file',
            attachment_id: p.attachmentId,
            name: p.filename ?? '',
            mime: p.mediaType,
            size: p.size ?? 0,
          })
          break
        }
        const parsed = parseDataUrl(p.url)
        // A file given by URL (not bytes) has no block of its own: it is kept as an extra by the caller.
        if (parsed)
          out.push({
            type: 'image',
            mime: p.mediaType || parsed.mime,
            data: parsed.data,
            ...(p.attachmentId !== undefined && { attachment_id: p.attachmentId }),
          })
        break
      }
      case 'tool': {
        if (p.hasCall === false) break
        const call: FunctionCallBlock = {
          type: 'function_call',
          id: p.toolCallId,
          function_id: p.toolName,
          arguments: p.input,
        }
        out.push(call)
        if (p.result && p.resultEntryId === undefined) {
          const result: FunctionResultBlock = {
            type: 'function_result',
            function_call_id: p.toolCallId,
            content: contentOfOutput(p.result.output),
          }
          if (!p.result.flagless || p.result.isError) result.is_error = p.result.isError
          out.push(result)
        }
        break
      }
      case 'extra':
        if (p.part.type === BLOCK_DATA_PART) out.push(p.part.data as unknown as ContentBlock)
        break
    }
  }
  return out
}

/** True for parts that `partsToBlocks` cannot put into blocks: they are kept beside the message. */
export const isKeptAside = (p: NeutralPart): boolean =>
  (p.type === 'extra' && p.part.type !== BLOCK_DATA_PART) ||
  (p.type === 'file' && !(p.kind === 'file' && p.attachmentId !== undefined) && parseDataUrl(p.url) === null)

/** The plain text of the text parts (what a system message or an edit box shows). */
export const textOfParts = (parts: readonly NeutralPart[]): string =>
  parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n')

/** The plain text of a message's text blocks (what an edit box starts from, what a model reads). */
export const textOf = (content: readonly ContentBlock[]): string =>
  content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')

/** A session title from its first message: the first line, cut at a word near 48 characters. */
export function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0].replace(/\s+/g, ' ')
  if (line.length <= 48) return line
  const cut = line.slice(0, 48)
  const space = cut.lastIndexOf(' ')
  return `${(space > 24 ? cut.slice(0, space) : cut).trimEnd()}…`
}
