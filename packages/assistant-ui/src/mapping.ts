import type { Json, JsonObject } from '@colloquy/core'
import { textOfParts, type ChatNode, type NeutralPart } from '@colloquy/parts'
import {
  fromThreadMessageLike,
  type MessageStatus,
  type ThreadMessage,
  type ThreadMessageLike,
} from '@assistant-ui/react'

/**
 * Colloquy nodes ↔ assistant-ui messages: the one place both directions live.
 *
 * To assistant-ui: text → `text`, reasoning → `reasoning` (signature in `providerMetadata`), tool
 * call + result → one `tool-call` part with `result`/`isError`, images → `image` (a `data:` URL),
 * stored files → `file` (`colloquy-attachment:` URL), kept-aside parts → `data-*` / `source` parts.
 * What assistant-ui refuses is carried in `metadata.custom.colloquy` so it comes back: blank
 * text and reasoning (it drops them), parts a user message may not hold, and a custom-role
 * message's parts (a system message holds exactly one text part).
 */

const COLLOQUY = 'colloquy'
/** A neutral part with no assistant-ui equivalent in that role, carried as a data part. */
const PART_DATA = 'colloquy-part'

type LikePart = Exclude<ThreadMessageLike['content'], string>[number]
type Carried = { dropped?: { index: number; part: NeutralPart }[]; parts?: readonly NeutralPart[] }

const meta = (o: JsonObject): { [COLLOQUY]: JsonObject } => ({ [COLLOQUY]: o })

function toLikePart(p: NeutralPart, role: ChatNode['role']): LikePart {
  if (role === 'user' && (p.type === 'reasoning' || p.type === 'tool'))
    return { type: 'data', name: PART_DATA, data: p }
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text }
    case 'reasoning':
      return {
        type: 'reasoning',
        text: p.text,
        ...(p.signature !== undefined && { providerMetadata: meta({ signature: p.signature }) }),
      }
    case 'tool': {
      const args =
        typeof p.input === 'object' && p.input !== null && !Array.isArray(p.input)
          ? (p.input as JsonObject)
          : undefined
      return {
        type: 'tool-call',
        toolCallId: p.toolCallId,
        toolName: p.toolName,
        ...(args ? { args } : { argsText: JSON.stringify(p.input) }),
        ...(p.result && { result: p.result.output, isError: p.result.isError }),
        // What the part has no field for: where the result lives, and whether the input was an object.
        artifact: {
          [COLLOQUY]: {
            input: p.input,
            resultEntryId: p.resultEntryId ?? null,
            flagless: p.result?.flagless ?? false,
            hasCall: p.hasCall ?? true,
          },
        },
      }
    }
    case 'file': {
      const extra = meta({
        kind: p.kind,
        ...(p.attachmentId !== undefined && { attachmentId: p.attachmentId }),
        ...(p.size !== undefined && { size: p.size }),
      })
      if (p.kind === 'image' && p.mediaType.startsWith('image/') && p.url.startsWith('data:image/')) {
        return {
          type: 'image',
          image: p.url,
          ...(p.filename !== undefined && { filename: p.filename }),
          providerMetadata: extra,
        }
      }
      return {
        type: 'file',
        data: p.url,
        mimeType: p.mediaType,
        ...(p.filename !== undefined && { filename: p.filename }),
        providerMetadata: extra,
      }
    }
    case 'extra': {
      const x = p.part
      if (typeof x.type === 'string' && x.type.startsWith('data-'))
        return { type: x.type as `data-${string}`, data: x.data ?? null }
      // A user message holds no source parts in assistant-ui: there it travels as data.
      if (
        role !== 'user' &&
        x.type === 'source-url' &&
        typeof x.url === 'string' &&
        typeof x.sourceId === 'string'
      ) {
        return {
          type: 'source',
          sourceType: 'url',
          id: x.sourceId,
          url: x.url,
          ...(typeof x.title === 'string' && { title: x.title }),
        }
      }
      return { type: 'data', name: PART_DATA, data: p }
    }
  }
}

/** Parts assistant-ui drops on conversion (blank text or reasoning in an assistant message). */
const dropped = (p: NeutralPart, role: ChatNode['role']): boolean =>
  role === 'assistant' && (p.type === 'text' || p.type === 'reasoning') && !p.text.trim()

/** A node as assistant-ui's `ThreadMessageLike`. */
export function toThreadMessageLike(
  node: Pick<ChatNode, 'id' | 'role' | 'parts' | 'entries'>,
  status?: MessageStatus,
): ThreadMessageLike {
  const carried: Carried = {}
  let content: LikePart[]
  if (node.role === 'system') {
    content = [{ type: 'text', text: textOfParts(node.parts) }]
    carried.parts = node.parts
  } else {
    content = []
    node.parts.forEach((p, index) => {
      if (dropped(p, node.role)) (carried.dropped ??= []).push({ index, part: p })
      else content.push(toLikePart(p, node.role))
    })
  }
  const head = node.entries[0] as ChatNode['entries'][number] | undefined
  return {
    id: node.id,
    role: node.role,
    content,
    ...(head && { createdAt: new Date(head.kind === 'message' ? head.message.timestamp : head.timestamp) }),
    ...(node.role === 'assistant' && status && { status }),
    metadata: { custom: { [COLLOQUY]: carried } },
  }
}

/** A node as assistant-ui's `ThreadMessage` (what `messageRepository` holds). */
export const toThreadMessage = (
  node: Pick<ChatNode, 'id' | 'role' | 'parts' | 'entries'>,
  status: MessageStatus = { type: 'complete', reason: 'unknown' },
): ThreadMessage => fromThreadMessageLike(toThreadMessageLike(node, status), node.id, status)

const colloquyOf = (x: unknown): JsonObject | undefined =>
  typeof x === 'object' && x !== null
    ? ((x as Record<string, unknown>)[COLLOQUY] as JsonObject | undefined)
    : undefined

type AnyPart = ThreadMessage['content'][number] | { type: 'data'; name: string; data: unknown }

/** One assistant-ui part back as a neutral part; null for parts Colloquy does not keep (audio, generative UI). */
export function fromPart(part: AnyPart): NeutralPart | null {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text }
    case 'reasoning': {
      const signature = colloquyOf(part.providerMetadata)?.signature
      return typeof signature === 'string'
        ? { type: 'reasoning', text: part.text, signature }
        : { type: 'reasoning', text: part.text }
    }
    case 'tool-call': {
      const c = colloquyOf(part.artifact)
      const input = (c && 'input' in c ? c.input : ((part.args as Json | undefined) ?? null)) as Json
      const hasResult = part.result !== undefined
      return {
        type: 'tool',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input,
        ...(hasResult && {
          result: {
            output: part.result as Json,
            isError: part.isError === true,
            ...(c?.flagless === true && { flagless: true as const }),
          },
        }),
        ...(typeof c?.resultEntryId === 'string' && { resultEntryId: c.resultEntryId }),
        ...(c?.hasCall === false && { hasCall: false as const }),
      }
    }
    case 'image':
    case 'file': {
      const c = colloquyOf(part.providerMetadata)
      const url = part.type === 'image' ? part.image : part.data
      const mediaType =
        part.type === 'image' ? (/^data:([^;,]*)/.exec(url)?.[1] ?? 'image/png') : part.mimeType
      const kind =
        c?.kind === 'image' || c?.kind === 'file'
          ? c.kind
          : part.type === 'image' || mediaType.startsWith('image/')
            ? 'image'
            : 'file'
      return {
        type: 'file',
        kind,
        mediaType,
        url,
        ...(part.filename !== undefined && { filename: part.filename }),
        ...(typeof c?.attachmentId === 'string' && { attachmentId: c.attachmentId }),
        ...(typeof c?.size === 'number' && { size: c.size }),
      }
    }
    case 'source':
      return part.sourceType === 'url'
        ? {
            type: 'extra',
            part: {
              type: 'source-url',
              sourceId: part.id,
              url: part.url,
              ...(part.title !== undefined && { title: part.title }),
            },
          }
        : {
            type: 'extra',
            part: {
              type: 'source-document',
              sourceId: part.id,
              title: part.title,
              mediaType: part.mediaType,
            },
          }
    case 'data':
      if (part.name === PART_DATA) return part.data as NeutralPart
      return { type: 'extra', part: { type: `data-${part.name}`, data: (part.data ?? null) as Json } }
    default:
      return null
  }
}

/** An assistant-ui message's parts (and its attachments, for a user message) back as neutral parts. */
export function partsFromThreadMessage(
  m: Pick<ThreadMessage, 'content' | 'metadata'> & { attachments?: ThreadMessage['attachments'] },
): NeutralPart[] {
  const carried = (colloquyOf(m.metadata?.custom) ?? {}) as unknown as Carried
  if (carried.parts) return [...carried.parts]
  const parts: NeutralPart[] = []
  for (const part of m.content as readonly AnyPart[]) {
    const p = fromPart(part)
    if (p) parts.push(p)
  }
  for (const a of m.attachments ?? []) {
    for (const part of a.content as readonly AnyPart[]) {
      const p = fromPart(part)
      if (p) parts.push(p.type === 'file' && p.filename === undefined ? { ...p, filename: a.name } : p)
    }
  }
  for (const { index, part } of carried.dropped ?? []) parts.splice(index, 0, part)
  return parts
}
