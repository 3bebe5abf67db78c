import type { ReplicaChange, SessionMeta } from '@colloquy/core'

// Server data written the way a client writes it: changes pushed to `POST /sync/push`.

/** The change that creates session `session_id`, empty, at time `at` (with any other fields in `more`). */
export const newSessionMeta = (
  session_id: string,
  title: string,
  at: number,
  more: Partial<SessionMeta> = {},
): ReplicaChange => ({
  type: 'meta',
  create: true,
  meta: {
    session_id,
    title,
    description: '',
    status: 'idle',
    kind: 'user',
    created_at: at,
    updated_at: at,
    message_count: 0,
    ...more,
  },
})

/**
 * A whole session as a client pushes it: its meta, `count` chained entries `e0`, `e1`, … (entry
 * `i` at `at + i`, holding `message(i)`), and its leaf on the last one.
 */
export function sessionChanges(
  session_id: string,
  title: string,
  at: number,
  count: number,
  message: (i: number) => Record<string, unknown>,
): unknown[] {
  const entries = Array.from({ length: count }, (_, i) => ({
    type: 'entry',
    session_id,
    entry: {
      id: `e${i}`,
      parent_id: i ? `e${i - 1}` : null,
      timestamp: at + i,
      revision: 0,
      kind: 'message',
      message: message(i),
    },
    base_revision: null,
  }))
  return [
    newSessionMeta(session_id, title, at),
    ...entries,
    { type: 'leaf', session_id, entry_id: `e${count - 1}` },
  ]
}

/** Pushes `mutations` as `client_id` (with `token`, when the server wants one); `what` names the caller in an error. */
export async function pushMutations(
  url: string,
  client_id: string,
  mutations: readonly unknown[],
  { what, token }: { what: string; token?: string },
): Promise<void> {
  const res = await fetch(`${url}/sync/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ client_id, mutations }),
  })
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`)
}
