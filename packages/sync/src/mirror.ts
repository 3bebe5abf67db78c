import {
  SessionError,
  type AgentMessage,
  type ContentBlock,
  type Json,
  type Store,
  type UpdateMessageRequest,
  type Usage,
} from '@colloquy/core'
import { jsonEqual } from '@colloquy/core/host'
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
    if (v?.role === 'assistant')
      return {
        role: 'assistant',
        content,
        timestamp,
        model: 'unknown',
        provider: 'unknown',
        stop_reason: 'end',
      }
    throw strict
  }
}

/** A message without what a refresh may rewrite in place: two are the same turn when these agree. */
function identity(m: AgentMessage): Omit<AgentMessage, 'content' | 'timestamp'> {
  const { content: _content, timestamp: _timestamp, ...rest } = m
  const out: Record<string, unknown> = { ...rest }
  delete out.details
  delete out.usage
  return out as Omit<AgentMessage, 'content' | 'timestamp'>
}

/** What `update-message` can set that differs between the local entry and the server's message. */
function changes(
  local: AgentMessage,
  remote: AgentMessage,
): Omit<UpdateMessageRequest, 'session_id' | 'entry_id'> | null {
  const l = local as { details?: Json; usage?: Usage }
  const r = remote as { details?: Json; usage?: Usage }
  const details =
    (remote.role === 'function_result' || remote.role === 'custom') &&
    !jsonEqual(l.details ?? null, r.details ?? null)
  const usage = remote.role === 'assistant' && !jsonEqual(l.usage ?? null, r.usage ?? null)
  if (!details && !usage && jsonEqual(local.content, remote.content)) return null
  return {
    content: remote.content,
    ...(details && { details: r.details ?? null }),
    ...(usage && { usage: r.usage ?? null }),
  }
}

/** The server's refusal as a SessionError: its own code and text when the body has them. */
async function refusal(res: Response): Promise<SessionError> {
  let said = ''
  try {
    const body = (await res.json()) as { error?: { message?: unknown } }
    if (typeof body?.error?.message === 'string') said = ` ${body.error.message.slice(0, 300)}`
  } catch {
    // Not JSON: the status says enough.
  }
  const text = `history: HTTP ${res.status}${said}`
  if (res.status === 404) return new SessionError('session/not_found', text)
  // Worth retrying later: the server is busy or failing. Anything else (401, 403, 400) needs a person.
  if (res.status === 429 || res.status >= 500) return new SessionError('session/storage', text)
  return new SessionError('session/invalid_request', text)
}

/**
 * A read-only local copy of an agent server's session history (seed 002), for display. Entries
 * get stable ids by position (`h_0`, `h_1`, …), so a refresh appends what is new and rewrites
 * in place what the server changed in a turn (its content, a result's details, a reply's
 * usage) or what was edited locally. When the server's history leaves the copy at a position
 * (another branch made active there: another role, another call), the rest comes in as a
 * branch beside it (`h_<i>~1`, …), reused when the server comes back to it; the leaf moves to
 * the end of the current history. Nothing is written before the whole answer is checked, and
 * refreshes of one mirror run one after the other.
 */
export function mirrorHistory(store: Store, options: MirrorOptions): Mirror {
  const session_id = options.local_session_id ?? `mirror:${options.session_id}`
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args))
  const url = `${options.url.replace(/\/+$/, '')}/sessions/${encodeURIComponent(options.session_id)}/history`

  async function load(): Promise<AgentMessage[]> {
    let res: Response
    try {
      res = await doFetch(url, { headers: options.token ? { authorization: `Bearer ${options.token}` } : {} })
    } catch (e) {
      throw new SessionError(
        'session/storage',
        `history: ${options.url} could not be reached (${e instanceof Error ? e.message : String(e)})`,
        { cause: e },
      )
    }
    if (!res.ok) throw await refusal(res)
    let body: unknown
    try {
      body = await res.json()
    } catch {
      throw new SessionError('session/invalid_request', 'history: the answer is not JSON')
    }
    const list = Array.isArray(body) ? body : (body as { messages?: unknown })?.messages
    if (!Array.isArray(list))
      throw new SessionError('session/invalid_request', 'history: expected a message array')
    return list.map(toMessage)
  }

  async function refresh(): Promise<{ added: number; updated: number }> {
    // Validate everything before writing anything.
    const messages = await load()
    await store.ensure({
      session_id,
      title: options.title ?? `History of ${options.session_id}`,
      kind: 'automation',
      metadata: { mirror: { url: options.url, session_id: options.session_id }, read_only: true },
    })
    let added = 0
    let updated = 0
    let parent: string | null = null
    for (const [i, message] of messages.entries()) {
      // The entries made for this position so far: the one under `parent` that is this turn, else a new one.
      let entry_id: string | undefined
      let free: string | undefined
      for (let k = 0; entry_id === undefined && free === undefined; k++) {
        const id = k === 0 ? `h_${i}` : `h_${i}~${k}`
        const existing = (await store.getMessage({ session_id, entry_id: id }))?.entry
        if (!existing) free = id
        else if (
          existing.parent_id === parent &&
          existing.kind === 'message' &&
          jsonEqual(identity(existing.message), identity(message))
        ) {
          entry_id = id
          const change = changes(existing.message, message)
          if (change) {
            await store.updateMessage({ session_id, entry_id: id, ...change })
            updated++
          }
        }
      }
      if (entry_id === undefined) {
        entry_id = free!
        await store.append({ session_id, entry_id, parent_id: parent, message })
        added++
      }
      parent = entry_id
    }
    // Setting the leaf where it already is writes nothing.
    if (parent) await store.setActiveLeaf({ session_id, entry_id: parent })
    return { added, updated }
  }

  let last: Promise<unknown> = Promise.resolve()
  return {
    session_id,
    refresh() {
      // One at a time: two refreshes racing would both append the same new turn.
      const run = last.then(refresh, refresh)
      last = run.catch(() => undefined)
      return run
    },
  }
}
