import { fileEntries, isFileMap, Source, type FileMap, type TranscriptInput } from './source.js'
import type { FormatId } from '../types.js'
import { isObj, str } from '../values.js'

const HEAD = 256 * 1024
const CLAUDE_TYPES = new Set([
  'user',
  'assistant',
  'system',
  'summary',
  'file-history-snapshot',
  'progress',
  'queue-operation',
  'attachment',
  'custom-title',
  'ai-title',
  'agent-name',
  'agent-setting',
  'permission-mode',
  'mode',
  'pr-link',
  'last-prompt',
  'bridge-session',
])
const CODEX_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted'])
const CODEX_ITEMS = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'custom_tool_call',
  'local_shell_call',
])

const isZip = (b: Uint8Array): boolean =>
  b[0] === 0x50 && b[1] === 0x4b && (b[2] === 3 || b[2] === 5) && (b[3] === 4 || b[3] === 6)
const SQLITE = 'SQLite format 3\0'
const isSqlite = (b: Uint8Array): boolean =>
  b.length >= 16 && [...SQLITE].every((c, i) => b[i] === c.charCodeAt(0))

/** The format of one parsed JSON record (a JSONL line, or a whole document). */
export function formatOfRecord(o: unknown): FormatId | null {
  if (!isObj(o)) return null
  if (typeof o.schema_version === 'string') return 'unified'
  if (typeof o.opa_version === 'string') return 'opa'
  const type = str(o.type)
  if (type && CODEX_TYPES.has(type) && 'payload' in o) return 'codex'
  if (str(o.record_type) === 'state') return 'codex'
  // Legacy Codex (mid-2025): a bare header, then bare response items.
  if (!type && typeof o.id === 'string' && 'instructions' in o && typeof o.timestamp === 'string')
    return 'codex'
  if (typeof o.sessionId === 'string' && typeof o.projectHash === 'string') return 'gemini'
  if (
    type &&
    CLAUDE_TYPES.has(type) &&
    ('uuid' in o || 'sessionId' in o || 'leafUuid' in o || 'messageId' in o)
  )
    return 'claude-code'
  if (type && CODEX_ITEMS.has(type) && !('uuid' in o)) return 'codex'
  if (isObj(o.info) && Array.isArray(o.messages) && str(o.info.id)?.startsWith('ses_')) return 'opencode'
  const id = str(o.id)
  if (id && /^(ses|msg|prt)_/.test(id)) return 'opencode'
  return formatOfChat(o)
}

/** A chat app's conversation: ChatGPT's `mapping`, Claude.ai's `chat_messages`, Open WebUI's `history`. */
function formatOfChat(o: Record<string, unknown>): FormatId | null {
  if (isObj(o.mapping) && ('current_node' in o || 'conversation_id' in o)) return 'chatgpt'
  if (Array.isArray(o.chat_messages)) return 'claude-ai'
  const chat = isObj(o.chat) ? o.chat : o
  if (isObj(chat.history) && isObj(chat.history.messages)) return 'open-webui'
  return null
}

function formatOfText(head: string): FormatId | null {
  const text = head.replace(/^\uFEFF/, '').trimStart()
  if (text[0] === '[') return formatOfExport(text)
  if (text[0] !== '{') return null
  const nl = text.indexOf('\n')
  const firstLine = nl === -1 ? text : text.slice(0, nl)
  try {
    const f = formatOfRecord(JSON.parse(firstLine))
    if (f) return f
  } catch {
    // Pretty-printed JSON: the first line is not a record. A whole document within the head is
    // judged by its parsed keys; a longer one by the keys its head shows.
    try {
      const f = formatOfRecord(JSON.parse(text))
      if (f) return f
    } catch {
      // Only the head of a bigger document.
    }
  }
  if (/"schema_version"\s*:/.test(text)) return 'unified'
  if (/"opa_version"\s*:/.test(text)) return 'opa'
  if (/"info"\s*:/.test(text) && /"ses_/.test(text)) return 'opencode'
  if (/"sessionId"\s*:/.test(text) && /"(projectHash|startTime)"\s*:/.test(text)) return 'gemini'
  // A first JSONL line longer than the head (an inlined image): judge by its leading keys.
  if (nl === -1 && /"parentUuid"\s*:/.test(text)) return 'claude-code'
  if (nl === -1 && /"type"\s*:\s*"(session_meta|response_item|event_msg|turn_context)"/.test(text))
    return 'codex'
  // Last: a JSONL line of another tool may quote an export (a pasted conversations.json).
  return formatOfExport(text)
}

/**
 * A chat app's export (an array of conversations, or one), judged by its keys in the first
 * bytes: a whole export is one JSON document, often pretty-printed, read whole only later.
 */
function formatOfExport(text: string): FormatId | null {
  try {
    const doc: unknown = JSON.parse(text)
    const first = Array.isArray(doc) ? doc.find(isObj) : doc
    return isObj(first) ? formatOfChat(first) : null
  } catch {
    // Only the head of a bigger document: look at its keys.
  }
  if (/"mapping"\s*:\s*\{/.test(text) && /"(current_node|conversation_id|children)"\s*:/.test(text))
    return 'chatgpt'
  if (/"chat_messages"\s*:/.test(text)) return 'claude-ai'
  if (/"history"\s*:\s*\{/.test(text) && /"(currentId|childrenIds|parentId)"\s*:/.test(text))
    return 'open-webui'
  return null
}

export async function formatOfFiles(files: FileMap): Promise<FormatId | null> {
  const list = fileEntries(files)
  const paths = list.map(([p]) => p)
  if (paths.some((p) => /(^|\/)(message|part|session)\/.+\.json$/.test(p) || /\.db$/.test(p)))
    return 'opencode'
  // Otherwise a folder of transcripts of one kind: the first file that is one says which.
  for (const [, contents] of list) {
    const format = await detectSource(new Source(contents))
    if (format) return format
  }
  return null
}

/** Recognises an input by its content (never by file name), reading only its first bytes. */
export async function detectFormat(input: TranscriptInput): Promise<FormatId | null> {
  if (isFileMap(input)) return formatOfFiles(input)
  return detectSource(new Source(input))
}

export async function detectSource(source: Source): Promise<FormatId | null> {
  const head = await source.head(HEAD)
  if (typeof head !== 'string') {
    if (isZip(head)) return 'opa'
    if (isSqlite(head)) return 'opencode'
    return formatOfText(new TextDecoder().decode(head))
  }
  return formatOfText(head)
}

const BLANK_HEAD = 4096

/**
 * Whether an input holds nothing but white space: a 0-byte session file (tools leave one when a
 * session never got a message). Only the first bytes are read.
 */
export async function isBlank(source: Source): Promise<boolean> {
  if (source.size === 0) return true
  const head = await source.head(BLANK_HEAD)
  if ((typeof head === 'string' ? head.length : head.byteLength) >= BLANK_HEAD) return false
  return (
    (typeof head === 'string' ? head : new TextDecoder().decode(head)).replace(/^\uFEFF/, '').trim() === ''
  )
}

export const isZipBytes = isZip
export const isSqliteBytes = isSqlite
