import type {
  AssistantMessage,
  ContentBlock,
  FileBlock,
  SessionEntry,
  SessionImport,
  StopReason,
} from '@colloquy/core'
import { exportSessions, hiddenEntry, rootEntry } from '../chat-apps/conversations.js'
import type { ImportContext } from '../import/context.js'
import { messageEntry, text } from '../session/entries.js'
import { sizeText, type Source } from '../input/source.js'
import { sessionOf } from '../session/session-of.js'
import { latestLeaf, TreeBuilder } from '../session/tree.js'
import { arr, compact, count, defined, isObj, num, str, toJson, toMs, type Obj } from '../values.js'

// ChatGPT data export `conversations.json`: an array of conversations, each a tree in
// `mapping` (node id → {message, parent, children}) with `current_node` the leaf the user was
// on. Every node is kept: the `message:null` root is the session's `thread_root`, hidden
// messages (the empty system prompt, custom instructions) are custom entries on the path,
// an assistant message addressed to a tool (`recipient` ≠ "all") is a function call and the
// `tool` messages after it are its results.

const STOP: Record<string, StopReason> = { stop: 'end', max_tokens: 'length', interrupted: 'aborted' }

/** The file id an asset pointer names (`file-service://file-AbC` → `file-AbC`), as `metadata.attachments` has it. */
export const assetId = (pointer: string): string => pointer.replace(/^[a-z-]+:\/\//, '')

/** A conversation node's message time, or the conversation's, in epoch ms. */
const timeOf = (m: Obj, fallback: number): number => toMs(m.create_time) ?? fallback

/** The text a tool or code message carries, whatever its content type. */
function contentText(c: Obj): string {
  const type = str(c.content_type)
  if (type === 'code' || type === 'execution_output') return str(c.text) ?? ''
  if (type === 'tether_browsing_display') return [str(c.result), str(c.summary)].filter(Boolean).join('\n')
  if (type === 'tether_quote') return [str(c.title), str(c.url), str(c.text)].filter(Boolean).join('\n')
  if (type === 'system_error') return str(c.text) ?? str(c.name) ?? ''
  return arr(c.parts)
    .map((p) => (typeof p === 'string' ? p : ''))
    .join('\n')
}

class Conversation {
  private readonly tb = new TreeBuilder()
  /** Node id → the call id a `tool` message below it answers. */
  private readonly callAbove = new Map<string, string>()
  private readonly mapping: Obj
  private readonly created: number
  readonly id: string

  constructor(
    private readonly conv: Obj,
    id: string,
    private readonly ctx: ImportContext,
  ) {
    this.mapping = isObj(conv.mapping) ? conv.mapping : {}
    this.id = id
    this.created = toMs(conv.create_time) ?? ctx.now()
  }

  private warn(code: string, message: string): void {
    this.ctx.warnings.add(code, message, { session_id: this.id })
  }

  /** Parts of a `text` / `multimodal_text` message as blocks. */
  private parts(c: Obj, key: string): ContentBlock[] {
    const out: ContentBlock[] = []
    for (const p of arr(c.parts)) {
      if (typeof p === 'string') {
        if (p !== '') out.push(text(p))
      } else if (isObj(p) && typeof p.asset_pointer === 'string') {
        // Images and files live beside conversations.json in the export; the block names them.
        const mime = str(p.content_type) === 'image_asset_pointer' ? 'image/*' : 'application/octet-stream'
        out.push({
          type: 'file',
          attachment_id: p.asset_pointer,
          name: assetId(p.asset_pointer),
          mime,
          size: Math.max(0, Math.round(num(p.size_bytes) ?? 0)),
        })
      } else if (isObj(p) && typeof p.text === 'string') out.push(text(p.text))
      else {
        this.warn(
          'unknown-block',
          `message ${key}: a part of type ${JSON.stringify(isObj(p) ? p.content_type : typeof p)} is kept as JSON text`,
        )
        out.push(text(JSON.stringify(p)))
      }
    }
    return out
  }

  /**
   * A message's content with its files: `metadata.attachments` lists what the user uploaded
   * (`id`, `name`, `size`, `mime_type`). An image the parts already point to gets its name,
   * type and size from it; any other file (a PDF, a spreadsheet) is in no part at all and
   * becomes a file block of its own, before the text, where ChatGPT shows it. The bytes of
   * neither are in conversations.json: one `attachment-missing` warning per file says so.
   */
  private content(c: Obj, meta: Obj, key: string): ContentBlock[] {
    const blocks = this.blocks(c, key)
    const uploaded: FileBlock[] = []
    arr(meta.attachments).forEach((a, i) => {
      if (!isObj(a))
        return this.warn('unknown-block', `message ${key}: attachment ${i + 1} is not an object; left out`)
      const id = str(a.id)
      const mime = str(a.mime_type) ?? str(a.mimeType)
      const size = count(a.size)
      const pointed =
        id === undefined
          ? undefined
          : blocks.find((b): b is FileBlock => b.type === 'file' && assetId(b.attachment_id) === id)
      if (pointed) {
        pointed.name = str(a.name) ?? pointed.name
        if (mime) pointed.mime = mime
        if (size !== undefined) pointed.size = size
        return
      }
      uploaded.push({
        type: 'file',
        attachment_id: id ?? `${key}:attachment-${i}`,
        name: str(a.name) ?? id ?? `attachment-${i + 1}`,
        mime: mime ?? 'application/octet-stream',
        size: size ?? 0,
      })
    })
    const content = [...uploaded, ...blocks]
    for (const b of content) {
      if (b.type !== 'file') continue
      this.warn(
        'attachment-missing',
        `message ${key}: ${JSON.stringify(b.name)} (${b.mime}, ${sizeText(b.size)}) is a file of the export archive, not in conversations.json; the file block names it (${b.attachment_id})`,
      )
    }
    return content
  }

  private blocks(c: Obj, key: string): ContentBlock[] {
    const type = str(c.content_type) ?? 'text'
    if (type === 'text' || type === 'multimodal_text') return this.parts(c, key)
    if (type === 'thoughts')
      return arr(c.thoughts)
        .filter(isObj)
        .map((t) => ({
          type: 'thinking',
          text: [str(t.summary), str(t.content)].filter(Boolean).join('\n\n'),
        }))
    if (type === 'reasoning_recap') return [{ type: 'thinking', text: str(c.content) ?? '' }]
    const t = contentText(c)
    if (
      t ||
      ['code', 'execution_output', 'tether_browsing_display', 'tether_quote', 'system_error'].includes(type)
    )
      return t ? [text(t)] : []
    this.warn('unknown-block', `message ${key}: content of type ${JSON.stringify(type)} is kept as JSON text`)
    return [text(JSON.stringify(c))]
  }

  /** The entries one mapping node becomes (none: it is an alias of its parent). */
  private entries(key: string, m: Obj, parent: string | null): SessionEntry[] {
    const author = isObj(m.author) ? m.author : {}
    const role = str(author.role) ?? 'unknown'
    const c = isObj(m.content) ? m.content : {}
    const meta = isObj(m.metadata) ? m.metadata : {}
    const time = timeOf(m, this.created)
    const type = str(c.content_type) ?? 'text'
    const hidden = meta.is_visually_hidden_from_conversation === true
    if (type === 'user_editable_context') {
      return [
        hiddenEntry(
          key,
          time,
          'chatgpt/custom-instructions',
          defined({
            hidden: true,
            user_profile: str(c.user_profile),
            user_instructions: str(c.user_instructions),
          }),
        ),
      ]
    }
    if (role === 'system' || hidden) {
      return [
        hiddenEntry(key, time, role === 'system' ? 'chatgpt/system' : 'chatgpt/hidden', {
          hidden,
          role,
          content: toJson(c),
        }),
      ]
    }
    const recipient = str(m.recipient) ?? 'all'
    if (role === 'assistant') {
      const content = this.content(c, meta, key)
      const toTool = recipient !== 'all'
      if (toTool) {
        // A message to a tool is its call: the code or command it sent is the argument.
        const input = content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')
        content.length = 0
        content.push({
          type: 'function_call',
          id: key,
          function_id: recipient,
          arguments: defined({ input, language: str(c.language) }),
        })
        this.callAbove.set(key, key)
      }
      const finish = isObj(meta.finish_details) ? str(meta.finish_details.type) : undefined
      const status = str(m.status)
      const message: AssistantMessage = {
        role: 'assistant',
        content,
        model: str(meta.model_slug) ?? str(this.conv.default_model_slug) ?? 'unknown',
        provider: 'openai',
        timestamp: time,
        stop_reason: toTool
          ? 'function_call'
          : status === 'in_progress'
            ? 'aborted'
            : finish
              ? (STOP[finish] ?? 'end')
              : 'end',
      }
      if (finish) message.native_stop_reason = finish
      else if (status && status !== 'finished_successfully') message.native_stop_reason = status
      return [messageEntry(key, message)]
    }
    if (role === 'tool') {
      const call = parent === null ? undefined : this.callAbove.get(parent)
      const name = str(author.name) ?? 'tool'
      const content = this.content(c, meta, key)
      if (call) {
        this.callAbove.set(key, call)
        return [
          messageEntry(key, {
            role: 'function_result',
            function_call_id: call,
            function_id: name,
            content,
            timestamp: time,
            details: toJson(compact({ ...c, parts: undefined, result: undefined, text: undefined })),
            is_error: type === 'system_error',
          }),
        ]
      }
      // A tool message no call leads to (a plugin's or a canvas's own message): shown as a notice.
      return [
        messageEntry(key, {
          role: 'custom',
          custom_type: `chatgpt/tool:${name}`,
          content,
          timestamp: time,
          details: toJson(c),
        }),
      ]
    }
    if (role !== 'user')
      this.warn('unknown-role', `message ${key} has role ${JSON.stringify(role)}; read as a user message`)
    return [messageEntry(key, { role: 'user', content: this.content(c, meta, key), timestamp: time })]
  }

  /** Mapping nodes from the root down (parents first), so tool results find their call. */
  private order(): string[] {
    const out: string[] = []
    const seen = new Set<string>()
    const roots = Object.keys(this.mapping).filter((k) => {
      const n = this.mapping[k]
      const p = isObj(n) ? str(n.parent) : undefined
      return p === undefined || !(p in this.mapping)
    })
    const stack = roots.reverse()
    while (stack.length) {
      const k = stack.pop()!
      if (seen.has(k)) continue
      seen.add(k)
      out.push(k)
      const n = this.mapping[k]
      const kids = isObj(n)
        ? arr(n.children)
            .map(str)
            .filter((c): c is string => c !== undefined && c in this.mapping)
        : []
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i])
    }
    // Nodes no root reaches (a parent loop): still kept, cut to the root by the tree builder.
    for (const k of Object.keys(this.mapping)) if (!seen.has(k)) out.push(k)
    return out
  }

  session(): SessionImport {
    const rootKey = `${this.id}:root`
    let root: string | undefined
    for (const key of this.order()) {
      const n = this.mapping[key]
      if (!isObj(n)) continue
      const parentKey = str(n.parent)
      const known = parentKey !== undefined && parentKey in this.mapping
      if (parentKey !== undefined && !known)
        this.warn(
          'missing-parent',
          `node ${key} names parent ${parentKey}, which is not in the mapping; it hangs off the root`,
        )
      if (!isObj(n.message)) {
        // The `message:null` root is the session's root; one deeper in the tree is transparent.
        if (!known && root === undefined) {
          root = key
          this.tb.node(key, null, [rootEntry(key, this.created, 'chatgpt')])
        } else this.tb.alias(key, known ? parentKey : rootKey)
        continue
      }
      const parent = known ? parentKey : (root ?? rootKey)
      const entries = this.entries(key, n.message, known ? parentKey : null)
      this.tb.node(key, parent, entries)
    }
    if (root === undefined) this.tb.node(rootKey, null, [rootEntry(rootKey, this.created, 'chatgpt')])
    else this.tb.alias(rootKey, root)
    const entries = this.tb.build((m) =>
      this.warn('missing-parent', `node ${m.key} is on a parent loop; it hangs off the root`),
    )
    for (const e of entries)
      if (e.parent_id === null && e.id !== (root ?? rootKey)) e.parent_id = root ?? rootKey
    const current = str(this.conv.current_node)
    let leaf = current === undefined ? undefined : this.tb.tailOf(current)
    if (current === undefined || leaf === undefined || leaf === null) {
      if (current !== undefined)
        this.warn(
          'graph-mismatch',
          `current_node ${current} is not in the mapping; the newest leaf is active`,
        )
      leaf = latestLeaf(entries)
    }
    return sessionOf(
      {
        session_id: this.id,
        title: str(this.conv.title),
        created_at: toMs(this.conv.create_time),
        updated_at: toMs(this.conv.update_time),
        metadata: defined({
          format: 'chatgpt',
          source_session_id: this.id,
          model: str(this.conv.default_model_slug),
          gizmo_id: str(this.conv.gizmo_id),
          is_archived: typeof this.conv.is_archived === 'boolean' ? this.conv.is_archived : undefined,
          current_node: current,
        }),
        entries,
        active_leaf: leaf,
      },
      this.ctx.now,
    )
  }
}

/** One session per conversation of a ChatGPT `conversations.json` (or a single conversation). */
export function readChatGpt(source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  return exportSessions(
    source,
    ctx,
    'ChatGPT export',
    (conv, i) => str(conv.conversation_id) ?? str(conv.id) ?? `chatgpt-${i + 1}`,
    (conv, id) => new Conversation(conv, id, ctx).session(),
  )
}

/** Whether a parsed value looks like a ChatGPT conversation. */
export const isChatGptConversation = (o: unknown): boolean =>
  isObj(o) && isObj(o.mapping) && ('current_node' in o || 'conversation_id' in o)
