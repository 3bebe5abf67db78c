import type { AssistantMessage, ContentBlock, SessionEntry, SessionImport } from '@colloquy/core'
import { exportSessions, rootEntry } from '../chat-apps/conversations.js'
import type { ImportContext } from '../import/context.js'
import { messageEntry, text } from '../session/entries.js'
import type { Source } from '../input/source.js'
import { sessionOf } from '../session/session-of.js'
import { latestLeaf, TreeBuilder } from '../session/tree.js'
import { arr, defined, isObj, num, str, toJson, toMs, type Obj } from '../values.js'

// Claude.ai data export `conversations.json`: an array of conversations with `chat_messages`.
// Newer exports give each message `parent_message_uuid` (the root's parent is the all-zero
// uuid), which makes a tree: messages beside each other there (a retry, an edited prompt, a
// second chain from the root) are sibling branches under the session's `thread_root`. Older
// exports have no parent ids and list messages out of time order: they are sorted by
// `created_at` (stable, so a prompt and its reply sharing a timestamp keep their order) and chained.

const ZERO = '00000000-0000-4000-8000-000000000000'

/** `.png` → `image/png`…: what a file block can say about a file the export only names. */
function mimeOf(name: string, given: string | undefined): string {
  if (given && given.includes('/')) return given
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase()
  const known: Record<string, string> = {
    png: 'image/png',
    jpg: 'image/jpeg',
    jpeg: 'image/jpeg',
    gif: 'image/gif',
    webp: 'image/webp',
    pdf: 'application/pdf',
    txt: 'text/plain',
    md: 'text/markdown',
    csv: 'text/csv',
    json: 'application/json',
  }
  return (ext && known[ext]) ?? (given ? `application/${given}` : 'application/octet-stream')
}

class Conversation {
  private readonly tb = new TreeBuilder()
  readonly id: string
  private readonly created: number
  private readonly encoder = new TextEncoder()

  constructor(
    private readonly conv: Obj,
    id: string,
    private readonly ctx: ImportContext,
  ) {
    this.id = id
    this.created = toMs(conv.created_at) ?? ctx.now()
  }

  private warn(code: string, message: string): void {
    this.ctx.warnings.add(code, message, { session_id: this.id })
  }

  /** Attachments (text the app extracted, kept as bytes) and files (named only) as file blocks. */
  private files(m: Obj, key: string): ContentBlock[] {
    const out: ContentBlock[] = []
    arr(m.attachments)
      .filter(isObj)
      .forEach((a, i) => {
        const name = str(a.file_name) ?? `attachment-${i + 1}`
        const extracted = str(a.extracted_content)
        const id = `${key}:attachment-${i}`
        const data = this.encoder.encode(extracted ?? '')
        const mime = extracted !== undefined ? 'text/plain' : mimeOf(name, str(a.file_type))
        if (extracted !== undefined)
          this.ctx.attachments.push({ session_id: this.id, attachment_id: id, name, mime, data })
        out.push({
          type: 'file',
          attachment_id: id,
          name,
          mime,
          size: extracted !== undefined ? data.byteLength : Math.max(0, Math.round(num(a.file_size) ?? 0)),
        })
      })
    const files = arr(m.files).filter(isObj)
    files.forEach((f, i) => {
      const name = str(f.file_name) ?? `file-${i + 1}`
      out.push({
        type: 'file',
        attachment_id: str(f.file_uuid) ?? `${key}:file-${i}`,
        name,
        mime: mimeOf(name, str(f.file_kind)),
        size: 0,
      })
    })
    if (files.length)
      this.warn(
        'attachment-missing',
        `message ${key}: ${files.length} file(s) are only named in the export (their bytes are not in it); file blocks name them`,
      )
    return out
  }

  /**
   * One message's entries. `content[]` carries text, thinking and tool use; a tool result in
   * it becomes its own `function_result` entry, and what follows it a new assistant entry.
   */
  private entries(m: Obj, key: string): SessionEntry[] {
    const time = toMs(m.created_at) ?? this.created
    const sender = str(m.sender)
    const content = arr(m.content).filter(isObj)
    if (sender !== 'assistant') {
      if (sender !== 'human')
        this.warn(
          'unknown-role',
          `message ${key} has sender ${JSON.stringify(sender)}; read as a user message`,
        )
      const blocks: ContentBlock[] = content.length
        ? content.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [text(b.text)] : []))
        : [text(str(m.text) ?? '')]
      return [
        messageEntry(key, { role: 'user', content: [...this.files(m, key), ...blocks], timestamp: time }),
      ]
    }
    const out: SessionEntry[] = []
    let blocks: ContentBlock[] = [...this.files(m, key)]
    const calls = new Map<string, string>()
    const flush = (last: boolean): void => {
      if (!blocks.length && !last) return
      const message: AssistantMessage = {
        role: 'assistant',
        content: blocks,
        model: str(this.conv.model) ?? str(m.model) ?? 'unknown',
        provider: 'anthropic',
        timestamp: time,
        stop_reason: blocks.some((b) => b.type === 'function_call') ? 'function_call' : 'end',
      }
      out.push(messageEntry(out.length ? `${key}:${out.length}` : key, message))
      blocks = []
    }
    if (!content.length) blocks.push(text(str(m.text) ?? ''))
    for (const b of content) {
      const type = str(b.type)
      if (type === 'text') blocks.push(text(str(b.text) ?? ''))
      else if (type === 'thinking') blocks.push({ type: 'thinking', text: str(b.thinking) ?? '' })
      else if (type === 'tool_use') {
        const id = str(b.id) ?? `${key}:call-${calls.size}`
        calls.set(id, str(b.name) ?? 'unknown')
        blocks.push({
          type: 'function_call',
          id,
          function_id: str(b.name) ?? 'unknown',
          arguments: toJson(b.input ?? null),
        })
      } else if (type === 'tool_result') {
        flush(false)
        const call = str(b.tool_use_id) ?? [...calls.keys()].at(-1) ?? `${key}:call`
        const result = arr(b.content)
          .filter(isObj)
          .map((c) => text(typeof c.text === 'string' ? c.text : JSON.stringify(c)))
        out.push(
          messageEntry(`${key}:${out.length}`, {
            role: 'function_result',
            function_call_id: call,
            function_id: str(b.name) ?? calls.get(call) ?? 'unknown',
            content: result,
            timestamp: time,
            details: null,
            is_error: b.is_error === true,
          }),
        )
      } else {
        this.warn(
          'unknown-block',
          `message ${key}: a block of type ${JSON.stringify(type)} is kept as JSON text`,
        )
        blocks.push(text(JSON.stringify(b)))
      }
    }
    if (blocks.length || !out.length) flush(true)
    return out
  }

  session(): SessionImport {
    const rootKey = `${this.id}:root`
    this.tb.node(rootKey, null, [rootEntry(rootKey, this.created, 'claude-ai')])
    const list = arr(this.conv.chat_messages).filter(isObj)
    const tree = list.some((m) => typeof m.parent_message_uuid === 'string')
    const ordered = tree
      ? list
      : list
          .map((m, i) => ({ m, i, t: toMs(m.created_at) ?? 0 }))
          .sort((a, b) => a.t - b.t || a.i - b.i)
          .map((x) => x.m)
    let prev = rootKey
    const known = new Set(list.map((m) => str(m.uuid)))
    ordered.forEach((m, i) => {
      let key = str(m.uuid) ?? `${this.id}:m${i}`
      if (this.tb.has(key)) {
        this.warn('duplicate-uuid', `message uuid ${key} appears twice; the second is renamed`)
        key = `${key}~${i}`
      }
      let parent = prev
      if (tree) {
        const p = str(m.parent_message_uuid)
        parent = p === undefined || p === ZERO ? rootKey : p
        if (p !== undefined && p !== ZERO && !known.has(p)) {
          this.warn(
            'missing-parent',
            `message ${key} names parent ${p}, which is not in the conversation; it hangs off the root`,
          )
          parent = rootKey
        }
      }
      this.tb.node(key, parent, this.entries(m, key))
      prev = key
    })
    const entries = this.tb.build((miss) =>
      this.warn('missing-parent', `message ${miss.key} is on a parent loop; it hangs off the root`),
    )
    for (const e of entries) if (e.parent_id === null && e.id !== rootKey) e.parent_id = rootKey
    const current = str(this.conv.current_leaf_message_uuid)
    const leaf =
      (current === undefined ? undefined : this.tb.tailOf(current)) ??
      (tree ? latestLeaf(entries) : this.tb.tailOf(prev)) ??
      rootKey
    return sessionOf(
      {
        session_id: this.id,
        title: str(this.conv.name),
        created_at: toMs(this.conv.created_at),
        updated_at: toMs(this.conv.updated_at),
        metadata: defined({
          format: 'claude-ai',
          source_session_id: this.id,
          model: str(this.conv.model),
          summary: str(this.conv.summary) || undefined,
          account: isObj(this.conv.account) ? str(this.conv.account.uuid) : undefined,
        }),
        entries,
        active_leaf: leaf,
      },
      this.ctx.now,
    )
  }
}

/** One session per conversation of a Claude.ai export (or a single conversation). */
export function readClaudeAi(source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  return exportSessions(
    source,
    ctx,
    'Claude.ai export',
    (conv, i) => str(conv.uuid) ?? `claude-ai-${i + 1}`,
    (conv, id) => new Conversation(conv, id, ctx).session(),
  )
}
