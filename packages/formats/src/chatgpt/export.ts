import type { ContentBlock, JsonObject, SessionEntry, SessionImport } from '@colloquy/core'
import { THREAD_ROOT } from '../chat-apps/conversations.js'
import { assetId } from './import.js'
import { keptTree } from '../export/kept-tree.js'
import { isObj, str, type Obj } from '../values.js'

// ChatGPT `conversations.json` out: one conversation per session, every branch in `mapping`,
// `current_node` the active leaf. What ChatGPT holds goes out as ChatGPT writes it: user and
// assistant text, files in `metadata.attachments` (images also as asset pointers), thinking as
// `thoughts`, a call as a message to the tool (`recipient`), a result as a `tool` message, the
// hidden system and custom-instruction messages; the `thread_root` is the `message:null` root. Entries ChatGPT has no place for
// (other custom entries, visible notices) are left out and their children hang where they
// hung. Importing the output gives back the same ids, parents, roles, texts and active leaf.

const HIDDEN = new Set(['chatgpt/system', 'chatgpt/custom-instructions', 'chatgpt/hidden'])

const seconds = (ms: number): number => ms / 1000

/**
 * Content as ChatGPT writes it: text parts, an image as an `image_asset_pointer` part, and
 * every file (images too) in `metadata.attachments`, a file other than an image only there.
 */
function parts(blocks: readonly ContentBlock[]): { content: Obj; attachments: Obj[] } {
  const out: unknown[] = []
  const attachments: Obj[] = []
  for (const b of blocks) {
    if (b.type === 'text') out.push(b.text)
    else if (b.type === 'file') {
      const image = b.mime.startsWith('image/')
      if (image)
        out.push({ content_type: 'image_asset_pointer', asset_pointer: b.attachment_id, size_bytes: b.size })
      attachments.push({
        id: image ? assetId(b.attachment_id) : b.attachment_id,
        name: b.name,
        size: b.size,
        mime_type: b.mime,
      })
    }
  }
  return { content: { content_type: out.some(isObj) ? 'multimodal_text' : 'text', parts: out }, attachments }
}

/** A message's content and, when it has files, the metadata that lists them. */
function withFiles(blocks: readonly ContentBlock[], metadata: JsonObject = {}): [Obj, Obj] {
  const { content, attachments } = parts(blocks)
  return [content, { metadata: attachments.length ? { ...metadata, attachments } : metadata }]
}

function message(e: SessionEntry): Obj | null {
  const base = (role: string, content: Obj, extra: Obj = {}): Obj => ({
    id: e.id,
    author: { role, name: null, metadata: {} },
    create_time: seconds(e.timestamp),
    update_time: null,
    content,
    status: 'finished_successfully',
    end_turn: null,
    weight: 1,
    metadata: {},
    recipient: 'all',
    ...extra,
  })
  if (e.kind === 'custom') {
    const d = isObj(e.data) ? e.data : {}
    const hidden = { is_visually_hidden_from_conversation: true }
    if (e.custom_type === 'chatgpt/custom-instructions')
      return base(
        'user',
        {
          content_type: 'user_editable_context',
          user_profile: str(d.user_profile) ?? '',
          user_instructions: str(d.user_instructions) ?? '',
        },
        { metadata: { ...hidden, is_user_system_message: true } },
      )
    const content = isObj(d.content) ? d.content : { content_type: 'text', parts: [] }
    return base(str(d.role) ?? 'system', content, { metadata: d.hidden === false ? {} : hidden })
  }
  const m = e.message
  if (m.role === 'user') return base('user', ...withFiles(m.content))
  if (m.role === 'function_result') {
    const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
    return base(
      'tool',
      { content_type: 'text', parts: [text] },
      { author: { role: 'tool', name: m.function_id, metadata: {} } },
    )
  }
  // A tool message no call led to came in as a visible notice: it goes back as that message.
  if (m.role === 'custom') {
    const [content, extra] = withFiles(m.content)
    return base('tool', content, {
      ...extra,
      author: { role: 'tool', name: m.custom_type.slice('chatgpt/tool:'.length), metadata: {} },
    })
  }
  if (m.role !== 'assistant') return null
  const meta: JsonObject = { model_slug: m.model }
  if (m.native_stop_reason) meta.finish_details = { type: m.native_stop_reason }
  const call = m.content.find((b) => b.type === 'function_call')
  if (call?.type === 'function_call') {
    const args =
      isObj(call.arguments) && typeof call.arguments.input === 'string'
        ? call.arguments.input
        : JSON.stringify(call.arguments)
    return base(
      'assistant',
      {
        content_type: 'code',
        language: isObj(call.arguments) ? (str(call.arguments.language) ?? 'unknown') : 'unknown',
        text: args,
      },
      { recipient: call.function_id, metadata: meta },
    )
  }
  const thinking = m.content.filter((b) => b.type === 'thinking')
  if (thinking.length && thinking.length === m.content.length) {
    return base(
      'assistant',
      {
        content_type: 'thoughts',
        thoughts: thinking.map((t) => ({ summary: '', content: t.type === 'thinking' ? t.text : '' })),
      },
      { metadata: meta },
    )
  }
  const [content, extra] = withFiles(m.content, meta)
  return base('assistant', content, {
    ...extra,
    ...(m.stop_reason === 'aborted' && { status: 'in_progress' }),
  })
}

/** What ChatGPT holds of an entry (null: nothing, the entry is left out). */
const holds = (e: SessionEntry): boolean =>
  e.kind === 'custom'
    ? e.custom_type === THREAD_ROOT || HIDDEN.has(e.custom_type)
    : e.message.role !== 'custom' || e.message.custom_type.startsWith('chatgpt/tool:')

/** One conversation object per session. */
export function toChatGpt(session: SessionImport): Obj {
  const tree = keptTree(session, holds)
  const mapping: Obj = {}
  const root = tree.entries.find(
    ({ entry, parent }) => parent === null && entry.kind === 'custom' && entry.custom_type === THREAD_ROOT,
  )?.entry.id
  const rootId = root ?? 'client-created-root'
  if (!root)
    mapping[rootId] = { id: rootId, message: null, parent: null, children: tree.children.get(null) ?? [] }
  // Other roots (a session with several) hang under the conversation's root, as on import.
  const extraRoots = root ? (tree.children.get(null) ?? []).filter((id) => id !== root) : []
  for (const { entry, parent } of tree.entries) {
    mapping[entry.id] = {
      id: entry.id,
      message: entry.id === root ? null : message(entry),
      parent: entry.id === root ? null : (parent ?? rootId),
      children: [...(tree.children.get(entry.id) ?? []), ...(entry.id === root ? extraRoots : [])],
    }
  }
  const model = str(session.meta.metadata?.model)
  return {
    title: session.meta.title,
    create_time: seconds(session.meta.created_at),
    update_time: seconds(session.meta.updated_at),
    mapping,
    moderation_results: [],
    current_node: tree.leaf ?? rootId,
    conversation_id: session.meta.session_id,
    id: session.meta.session_id,
    ...(model && { default_model_slug: model }),
  }
}

/** Sessions as a ChatGPT `conversations.json` (a JSON array, one conversation per session). */
export function exportChatGpt(sessions: SessionImport | readonly SessionImport[]): string {
  return JSON.stringify(
    (Array.isArray(sessions) ? sessions : [sessions]).map((s: SessionImport) => toChatGpt(s)),
  )
}
