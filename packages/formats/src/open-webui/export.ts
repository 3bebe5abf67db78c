import type { SessionEntry, SessionImport } from '@colloquy/core'
import { plainText } from '../session/entries.js'
import { keptTree } from '../export/kept-tree.js'
import { isObj, str, type Obj } from '../values.js'

// Open WebUI chat export out (the array "Export chats" writes): one row per session, every
// branch in `history.messages` (`parentId` / `childrenIds`), `history.currentId` the active
// leaf, the active path again as the flat `messages`. Open WebUI holds user, assistant and
// system messages as text; tool calls and results, thinking, custom entries and the
// `thread_root` have no place there and are left out (their children hang where they hung),
// so importing the output gives back the same messages, texts, branches and active leaf.

const seconds = (ms: number): number => Math.floor(ms / 1000)

const holds = (e: SessionEntry): boolean =>
  e.kind === 'custom'
    ? e.custom_type === 'open-webui/system'
    : e.message.role === 'user' ||
      (e.message.role === 'assistant' && e.message.content.some((b) => b.type === 'text'))

function message(e: SessionEntry, parentId: string | null, childrenIds: string[]): Obj {
  const base = { id: e.id, parentId, childrenIds, timestamp: seconds(e.timestamp) }
  if (e.kind === 'custom')
    return { ...base, role: 'system', content: isObj(e.data) ? (str(e.data.text) ?? '') : '' }
  const m = e.message
  const content = plainText(m.content.filter((b) => b.type === 'text'))
  if (m.role !== 'assistant') return { ...base, role: 'user', content }
  return {
    ...base,
    role: 'assistant',
    content,
    model: m.model,
    ...(m.agent && { modelName: m.agent }),
    done: m.stop_reason !== 'aborted',
    ...(m.usage && { usage: { prompt_tokens: m.usage.input, completion_tokens: m.usage.output } }),
    ...(m.error_message && { error: { content: m.error_message } }),
  }
}

/** One export row per session. */
export function toOpenWebUi(session: SessionImport): Obj {
  const tree = keptTree(session, holds)
  const messages: Obj = {}
  for (const { entry, parent } of tree.entries)
    messages[entry.id] = message(entry, parent, tree.children.get(entry.id) ?? [])
  const path: Obj[] = []
  for (let id = tree.leaf; id !== null; id = (messages[id] as { parentId: string | null }).parentId)
    path.unshift(messages[id] as Obj)
  const models = [
    ...new Set(
      tree.entries.flatMap(({ entry: e }) =>
        e.kind === 'message' && e.message.role === 'assistant' ? [e.message.model] : [],
      ),
    ),
  ]
  return {
    id: session.meta.session_id,
    title: session.meta.title,
    created_at: seconds(session.meta.created_at),
    updated_at: seconds(session.meta.updated_at),
    chat: {
      title: session.meta.title,
      models,
      history: { currentId: tree.leaf, messages },
      messages: path,
      timestamp: session.meta.created_at,
    },
  }
}

/** Sessions as Open WebUI's chat export (a JSON array of `{id, title, chat}` rows). */
export function exportOpenWebUi(sessions: SessionImport | readonly SessionImport[]): string {
  return JSON.stringify(
    (Array.isArray(sessions) ? sessions : [sessions]).map((s: SessionImport) => toOpenWebUi(s)),
  )
}
