import type { AssistantMessage, ContentBlock, SessionEntry, SessionImport } from '@colloquy/core'
import { exportSessions, hiddenEntry, rootEntry } from '../chat-apps/conversations.js'
import type { ImportContext } from '../import/context.js'
import { messageEntry, text } from '../session/entries.js'
import type { Source } from '../input/source.js'
import { sessionOf } from '../session/session-of.js'
import { latestLeaf, TreeBuilder } from '../session/tree.js'
import { arr, compact, count, defined, isObj, str, toJson, toMs, type Obj } from '../values.js'

// Open WebUI chat export: an array of `{id, title, chat, created_at, updated_at}` rows (the
// UI's "Export chats"), one such row, or the bare `chat` object kept in its database. A chat's
// `history.messages` is a tree (`parentId` / `childrenIds`) with `history.currentId` the
// message the user is on; messages that share a parent (a regenerated reply, an edited prompt)
// are sibling branches. A chat with only the flat `messages` array is a chain.

class Chat {
  private readonly tb = new TreeBuilder()
  readonly id: string
  private readonly created: number

  constructor(
    private readonly row: Obj,
    private readonly chat: Obj,
    id: string,
    private readonly ctx: ImportContext,
  ) {
    this.id = id
    this.created = toMs(row.created_at) ?? toMs(chat.timestamp) ?? ctx.now()
  }

  private warn(code: string, message: string): void {
    this.ctx.warnings.add(code, message, { session_id: this.id })
  }

  private entries(m: Obj, key: string): SessionEntry[] {
    const time = toMs(m.timestamp) ?? this.created
    const role = str(m.role)
    const body = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')
    const files: ContentBlock[] = arr(m.files)
      .filter(isObj)
      .map((f, i) => {
        const file = isObj(f.file) ? f.file : {}
        const meta = isObj(file.meta) ? file.meta : {}
        const name = str(f.name) ?? str(file.filename) ?? `file-${i + 1}`
        return {
          type: 'file',
          attachment_id: str(f.id) ?? str(file.id) ?? `${key}:file-${i}`,
          name,
          mime: str(meta.content_type) ?? str(f.type) ?? 'application/octet-stream',
          size: count(f.size) ?? count(meta.size) ?? 0,
        }
      })
    if (files.length)
      this.warn(
        'attachment-missing',
        `message ${key}: ${files.length} file(s) are only named in the export; file blocks name them`,
      )
    if (role === 'system') return [hiddenEntry(key, time, 'open-webui/system', { hidden: true, text: body })]
    if (role === 'assistant') {
      const usage = isObj(m.usage) ? m.usage : undefined
      const error = isObj(m.error)
        ? (str(m.error.content) ?? 'error')
        : typeof m.error === 'string'
          ? m.error
          : undefined
      const message: AssistantMessage = {
        role: 'assistant',
        content: [...files, ...(body ? [text(body)] : [])],
        model: str(m.model) ?? 'unknown',
        provider: 'open-webui',
        timestamp: time,
        stop_reason: error ? 'error' : m.done === false ? 'aborted' : 'end',
      }
      if (error) message.error_message = error
      const u =
        usage &&
        compact({
          input: count(usage.prompt_tokens) ?? count(usage.input_tokens),
          output: count(usage.completion_tokens) ?? count(usage.output_tokens),
        })
      if (u && Object.keys(u).length) message.usage = u
      if (str(m.modelName)) message.agent = str(m.modelName)
      return [messageEntry(key, message)]
    }
    if (role !== 'user')
      this.warn('unknown-role', `message ${key} has role ${JSON.stringify(role)}; read as a user message`)
    return [
      messageEntry(key, {
        role: 'user',
        content: [...files, ...(body ? [text(body)] : [])],
        timestamp: time,
      }),
    ]
  }

  session(): SessionImport {
    const rootKey = `${this.id}:root`
    this.tb.node(rootKey, null, [rootEntry(rootKey, this.created, 'open-webui')])
    const history = isObj(this.chat.history) ? this.chat.history : undefined
    const tree = history && isObj(history.messages) ? history.messages : undefined
    let last = rootKey
    if (tree) {
      for (const [key, m] of Object.entries(tree)) {
        if (!isObj(m)) continue
        const p = str(m.parentId)
        const parent = p === undefined ? rootKey : p in tree ? p : rootKey
        if (p !== undefined && !(p in tree))
          this.warn(
            'missing-parent',
            `message ${key} names parent ${p}, which is not in the chat; it hangs off the root`,
          )
        this.tb.node(key, parent, this.entries(m, key))
        last = key
      }
    } else {
      arr(this.chat.messages)
        .filter(isObj)
        .forEach((m, i) => {
          const key = str(m.id) ?? `${this.id}:m${i}`
          this.tb.node(key, last, this.entries(m, key))
          last = key
        })
    }
    const entries = this.tb.build((miss) =>
      this.warn('missing-parent', `message ${miss.key} is on a parent loop; it hangs off the root`),
    )
    for (const e of entries) if (e.parent_id === null && e.id !== rootKey) e.parent_id = rootKey
    const current = history ? str(history.currentId) : undefined
    let leaf = current === undefined ? undefined : this.tb.tailOf(current)
    if (current !== undefined && !leaf)
      this.warn(
        'graph-mismatch',
        `history.currentId ${current} is not a message of the chat; the newest leaf is active`,
      )
    leaf ??= tree ? latestLeaf(entries) : this.tb.tailOf(last)
    const models = arr(this.chat.models)
      .map(str)
      .filter((x): x is string => x !== undefined)
    return sessionOf(
      {
        session_id: this.id,
        title: str(this.row.title) ?? str(this.chat.title),
        created_at: toMs(this.row.created_at) ?? toMs(this.chat.timestamp),
        updated_at: toMs(this.row.updated_at),
        metadata: defined({
          format: 'open-webui',
          source_session_id: this.id,
          models: models.length ? models : undefined,
          tags: toJson(arr(this.chat.tags)),
          user_id: str(this.row.user_id),
          archived: typeof this.row.archived === 'boolean' ? this.row.archived : undefined,
        }),
        entries,
        active_leaf: leaf ?? rootKey,
      },
      this.ctx.now,
    )
  }
}

/** An export element's chat: the row's `chat`, or the element itself when it is a bare chat. */
const chatOf = (row: Obj): Obj => (isObj(row.chat) ? row.chat : row)

/** A chat's session id: the row's, the chat's, else (the bare chat object's id is "") its first message's. */
function chatId(row: Obj, index: number): string {
  const chat = chatOf(row)
  const history = isObj(chat.history) ? chat.history : {}
  const firstMessage =
    Object.keys(isObj(history.messages) ? history.messages : {})[0] ?? str(arr(chat.messages).find(isObj)?.id)
  return (
    str(row.id) || str(chat.id) || (firstMessage ? `open-webui-${firstMessage}` : `open-webui-${index + 1}`)
  )
}

/** One session per chat of an Open WebUI export (rows with `chat`, or a bare chat object). */
export function readOpenWebUi(source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  return exportSessions(source, ctx, 'Open WebUI export', chatId, (row, id) =>
    new Chat(row, chatOf(row), id, ctx).session(),
  )
}
