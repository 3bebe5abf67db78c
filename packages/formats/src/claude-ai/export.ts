import type { ContentBlock, SessionEntry, SessionImport } from '@colloquy/core'
import { THREAD_ROOT } from '../chat-apps/conversations.js'
import { plainText } from '../session/entries.js'
import { keptTree } from '../export/kept-tree.js'
import { iso, type Obj } from '../values.js'

// Claude.ai `conversations.json` out: one conversation per session, messages with
// `parent_message_uuid` (the all-zero uuid for the first ones) so every branch is there, and
// `current_leaf_message_uuid` the active leaf. Claude.ai keeps a tool call's result inside the
// assistant message: a result entry and the reply after it (the only child each time) go back
// into the message they came from, as `tool_result` and further content blocks. Files go out
// named (their bytes are not in the session); custom entries and the `thread_root` are left out,
// their children re-hung. A Claude.ai import exported and imported again is the same tree.

const ZERO = '00000000-0000-4000-8000-000000000000'

function blocks(content: readonly ContentBlock[]): Obj[] {
  const out: Obj[] = []
  for (const b of content) {
    if (b.type === 'text') out.push({ type: 'text', text: b.text })
    else if (b.type === 'thinking') out.push({ type: 'thinking', thinking: b.text })
    else if (b.type === 'function_call')
      out.push({ type: 'tool_use', id: b.id, name: b.function_id, input: b.arguments })
  }
  return out
}

const holds = (e: SessionEntry): boolean => e.kind === 'message' && e.message.role !== 'custom'

/** One conversation object per session. */
export function toClaudeAi(session: SessionImport): Obj {
  const tree = keptTree(session, holds)
  const byId = new Map(tree.entries.map(({ entry, parent }) => [entry.id, { entry, parent }]))
  const root = session.entries.find(
    (e) => e.parent_id === null && e.kind === 'custom' && e.custom_type === THREAD_ROOT,
  )
  // A folded entry → the message it went into.
  const home = new Map<string, string>()
  const messages: Obj[] = []
  for (const { entry, parent } of tree.entries) {
    if (home.has(entry.id) || entry.kind !== 'message') continue
    const m = entry.message
    const base = {
      uuid: entry.id,
      parent_message_uuid: parent === null ? ZERO : (home.get(parent) ?? parent),
      created_at: iso(entry.timestamp),
      updated_at: iso(entry.timestamp),
      attachments: [] as Obj[],
      files: [] as Obj[],
    }
    if (m.role === 'user' || m.role === 'function_result') {
      // A result with no assistant message to fold into goes out as a human message's text.
      const files = m.content.flatMap((b) =>
        b.type === 'file' ? [{ file_name: b.name, file_uuid: b.attachment_id }] : [],
      )
      messages.push({
        ...base,
        sender: 'human',
        text: plainText(m.content),
        content: blocks(m.content),
        files,
      })
      continue
    }
    // The assistant message, then the results and replies Claude.ai kept inside it.
    const content = blocks(m.content)
    let at = entry.id
    for (;;) {
      const kids = tree.children.get(at) ?? []
      const next = kids.length === 1 ? byId.get(kids[0])?.entry : undefined
      if (!next || next.kind !== 'message') break
      const prev = byId.get(at)!.entry
      const afterResult = prev.kind === 'message' && prev.message.role === 'function_result'
      if (next.message.role === 'function_result') {
        content.push({
          type: 'tool_result',
          tool_use_id: next.message.function_call_id,
          name: next.message.function_id,
          content: next.message.content.flatMap((b) =>
            b.type === 'text' ? [{ type: 'text', text: b.text }] : [],
          ),
          is_error: next.message.is_error,
        })
      } else if (next.message.role === 'assistant' && afterResult)
        content.push(...blocks(next.message.content))
      else break
      home.set(next.id, entry.id)
      at = next.id
    }
    messages.push({
      ...base,
      sender: 'assistant',
      text: content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n'),
      content,
    })
  }
  const leaf = tree.leaf === null ? null : (home.get(tree.leaf) ?? tree.leaf)
  return {
    uuid: session.meta.session_id,
    name: session.meta.title,
    created_at: iso(root?.timestamp ?? session.meta.created_at),
    updated_at: iso(session.meta.updated_at),
    chat_messages: messages,
    ...(leaf !== null && { current_leaf_message_uuid: leaf }),
  }
}

/** Sessions as a Claude.ai `conversations.json` (a JSON array, one conversation per session). */
export function exportClaudeAi(sessions: SessionImport | readonly SessionImport[]): string {
  return JSON.stringify(
    (Array.isArray(sessions) ? sessions : [sessions]).map((s: SessionImport) => toClaudeAi(s)),
  )
}
