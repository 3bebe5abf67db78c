import type { Json, JsonObject } from '@colloquy/core'
import type { ChatNode, NeutralPart } from '@colloquy/parts'
import type { UIMessage } from 'ai'

/**
 * Colloquy nodes ↔ AI SDK `UIMessage`s: the one place both directions live.
 *
 * To the SDK: text → `text`, thinking → `reasoning` (signature in `providerMetadata.colloquy`),
 * tool call + result → `tool-<name>` with `input-available` / `output-available` (output) /
 * `output-error` (errorText), images → `file` with a `data:` URL, stored files → `file` with a
 * `colloquy-attachment:` URL; parts Colloquy has no block for (`data-*`, sources, `step-start`)
 * are kept verbatim in the message's sidecar entry, and so is `metadata`. Back: the same, plus
 * `dynamic-tool` parts read as tool calls. Not kept: a part's transient `state`, text parts'
 * `providerMetadata`, tool approval states (an approval is not a result).
 */

type Part = UIMessage['parts'][number]
const COLLOQUY = 'colloquy'

const meta = (o: JsonObject): { [COLLOQUY]: JsonObject } => ({ [COLLOQUY]: o })

export function toUIPart(p: NeutralPart): Part {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text }
    case 'reasoning':
      return {
        type: 'reasoning',
        text: p.text,
        ...(p.signature !== undefined && { providerMetadata: meta({ signature: p.signature }) }),
      }
    case 'file':
      return {
        type: 'file',
        mediaType: p.mediaType,
        url: p.url,
        ...(p.filename !== undefined && { filename: p.filename }),
        providerMetadata: meta({
          kind: p.kind,
          ...(p.attachmentId !== undefined && { attachmentId: p.attachmentId }),
          ...(p.size !== undefined && { size: p.size }),
        }),
      }
    case 'tool': {
      // What the part has no field for: where the result lives, and an error's output when it is not text.
      const carried = meta({
        ...(p.resultEntryId !== undefined && { resultEntryId: p.resultEntryId }),
        ...(p.result?.flagless && { flagless: true }),
        ...(p.hasCall === false && { hasCall: false }),
        ...(p.result?.isError && typeof p.result.output !== 'string' && { output: p.result.output }),
      })
      const base = {
        type: `tool-${p.toolName}` as const,
        toolCallId: p.toolCallId,
        input: p.input,
        callProviderMetadata: carried,
      }
      if (!p.result) return { ...base, state: 'input-available' } as Part
      if (p.result.isError)
        return {
          ...base,
          state: 'output-error',
          errorText: typeof p.result.output === 'string' ? p.result.output : JSON.stringify(p.result.output),
        } as Part
      return { ...base, state: 'output-available', output: p.result.output } as Part
    }
    case 'extra':
      return p.part as unknown as Part
  }
}

/** A node as a `UIMessage` (its sidecar's metadata as `metadata`). */
export const toUIMessage = <M extends UIMessage = UIMessage>(
  node: Pick<ChatNode, 'id' | 'role' | 'parts' | 'metadata'>,
): M =>
  ({
    id: node.id,
    role: node.role,
    parts: node.parts.map(toUIPart),
    ...(node.metadata !== undefined && { metadata: node.metadata }),
  }) as M

const colloquyOf = (x: unknown): JsonObject | undefined =>
  typeof x === 'object' && x !== null
    ? ((x as Record<string, unknown>)[COLLOQUY] as JsonObject | undefined)
    : undefined

/** One SDK part back as a neutral part; a part with no Colloquy block is kept whole as an extra. */
export function fromUIPart(part: Part): NeutralPart {
  if (part.type === 'text') return { type: 'text', text: part.text }
  if (part.type === 'reasoning') {
    const signature = colloquyOf(part.providerMetadata)?.signature
    return typeof signature === 'string'
      ? { type: 'reasoning', text: part.text, signature }
      : { type: 'reasoning', text: part.text }
  }
  if (part.type === 'file') {
    const c = colloquyOf(part.providerMetadata)
    const kind =
      c?.kind === 'image' || c?.kind === 'file'
        ? c.kind
        : part.mediaType.startsWith('image/')
          ? 'image'
          : 'file'
    return {
      type: 'file',
      kind,
      mediaType: part.mediaType,
      url: part.url,
      ...(part.filename !== undefined && { filename: part.filename }),
      ...(typeof c?.attachmentId === 'string' && { attachmentId: c.attachmentId }),
      ...(typeof c?.size === 'number' && { size: c.size }),
    }
  }
  const tool =
    part.type === 'dynamic-tool' ? part.toolName : part.type.startsWith('tool-') ? part.type.slice(5) : null
  if (tool !== null && 'toolCallId' in part) {
    const t = part as {
      toolCallId: string
      state: string
      input?: unknown
      output?: unknown
      errorText?: string
      callProviderMetadata?: unknown
    }
    const c = colloquyOf(t.callProviderMetadata)
    const result =
      t.state === 'output-available'
        ? { output: (t.output ?? null) as Json, isError: false }
        : t.state === 'output-error'
          ? { output: (c && 'output' in c ? c.output : (t.errorText ?? '')) as Json, isError: true }
          : undefined
    return {
      type: 'tool',
      toolCallId: t.toolCallId,
      toolName: tool,
      input: (t.input ?? null) as Json,
      ...(result && { result: { ...result, ...(c?.flagless === true && { flagless: true as const }) } }),
      ...(typeof c?.resultEntryId === 'string' && { resultEntryId: c.resultEntryId }),
      ...(c?.hasCall === false && { hasCall: false as const }),
    }
  }
  return { type: 'extra', part: JSON.parse(JSON.stringify(part)) as JsonObject }
}

export const partsFromUIMessage = (m: Pick<UIMessage, 'parts'>): NeutralPart[] => m.parts.map(fromUIPart)
