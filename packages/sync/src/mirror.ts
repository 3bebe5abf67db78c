import { SessionError, jsonEqual, type AgentMessage, type ContentBlock, type Store } from '@colloquy/core'
import { parseAgentMessage } from '@colloquy/core/wire'

export interface MirrorOptions {
  /** The agent server's base URL (it answers `GET /sessions/:id/history`). */
  url: string
  /** The session id on the agent server. */
  session_id: string
  token?: string
  fetch?: typeof fetch
  /** Local session to mirror into; default `mirror:<session_id>`. */
  local_session_id?: string
  title?: string
}

export interface Mirror {
  readonly session_id: string
  /** Fetches the history again and brings the local copy up to date. */
  refresh(): Promise<{ added: number; updated: number }>
}

/** Agent servers return a `Message[]`-compatible array: Colloquy messages, or `{role, content}` with string content. */
function toMessage(value: unknown, index: number): AgentMessage {
  try {
    return parseAgentMessage(value, `history[${index}]`)
  } catch (strict) {
    const v = value as { role?: unknown; content?: unknown; timestamp?: unknown }
    const content: ContentBlock[] = typeof v?.content === 'string' ? [{ type: 'text', text: v.content }] : []
    const timestamp = typeof v?.timestamp === 'number' ? v.timestamp : 0
    if (v?.role === 'user') return { role: 'user', content, timestamp }
    if (v?.role === 'assistant') return { role: 'assistant', content, timestamp, model: 'unknown', provider: 'unknown', stop_reason: 'end' }
    throw strict
  }
}

/**
 * A read-only local copy of an agent server's session history (seed 002), for display. Entries
 * get stable ids by position (`h_0`, `h_1`, …), so a refresh appends what is new, rewrites what
 * changed (a compacted or redacted turn) and moves the leaf to the end of the current history.
 */
export function mirrorHistory(store: Store, options: MirrorOptions): Mirror {
  const session_id = options.local_session_id ?? `mirror:${options.session_id}`
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args))
  return {
    session_id,
    async refresh() {
      const res = await doFetch(`${options.url.replace(/\/+$/, '')}/sessions/${encodeURIComponent(options.session_id)}/history`, {
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      })
      if (!res.ok) throw new SessionError(res.status === 404 ? 'session/not_found' : 'session/storage', `history: HTTP ${res.status}`)
      const body: unknown = await res.json()
      const list = Array.isArray(body) ? body : (body as { messages?: unknown })?.messages
      if (!Array.isArray(list)) throw new SessionError('session/invalid_request', 'history: expected a message array')
      // Validate everything before writing anything.
      const messages = list.map(toMessage)
      await store.ensure({ session_id, title: options.title ?? `History of ${options.session_id}`, kind: 'automation', metadata: { mirror: { url: options.url, session_id: options.session_id }, read_only: true } })
      let added = 0
      let updated = 0
      let parent: string | null = null
      for (const [i, message] of messages.entries()) {
        const entry_id = `h_${i}`
        const existing = (await store.getMessage({ session_id, entry_id }))?.entry
        if (!existing) {
          await store.append({ session_id, entry_id, parent_id: parent, message })
          added++
        } else if (existing.kind === 'message' && !jsonEqual(existing.message.content, message.content)) {
          await store.updateMessage({ session_id, entry_id, content: message.content })
          updated++
        }
        parent = entry_id
      }
      if (parent) await store.setActiveLeaf({ session_id, entry_id: parent })
      return { added, updated }
    },
  }
}
