import type { AgentMessage } from '@colloquy/core'
import type { Scope } from './access.js'
import { callAs, type Service } from './rpc.js'

/**
 * `GET /sessions/:id/history` (seeds/002, Agent Application Protocol): the active path as a
 * `Message[]`. The store keeps full, uncompacted histories, so this is the exact transcript:
 * bookkeeping (`kind: "custom"`) entries are left out, tool calls without a result stay in.
 */
export async function history(service: Service, scope: Scope, session_id: string): Promise<AgentMessage[]> {
  const out: AgentMessage[] = []
  let cursor: string | undefined
  do {
    const page = (await callAs(service, scope, 'session::messages', { session_id, cursor, limit: 500 })) as {
      messages: Array<{ message?: AgentMessage }>
      next_cursor?: string
    }
    for (const item of page.messages) if (item.message) out.push(item.message)
    cursor = page.next_cursor
    // Other requests are served between pages: a long transcript holds the event loop for one
    // page at a time, not for all of it.
    if (cursor !== undefined) await new Promise((resolve) => setImmediate(resolve))
  } while (cursor !== undefined)
  return out
}

/** `capabilities.history` of `GET /meta`: full histories, never compacted. */
export const historyCapabilities = { full: {} } as const
