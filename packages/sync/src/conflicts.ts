import type { SessionEntry } from '@colloquy/core'
import type { PushResult } from '@colloquy/core/protocol'
import type { Coalesced } from './outbox.js'
import { KV, kv, type Replication } from './state.js'
import type { Conflict, Rejection } from './types.js'

/** Rejected changes live in the `kv` side store under this prefix and their outbox key. */
const REJECTED = 'sync:rejected:'

/**
 * An update the server refused because its base moved on, settled at a revision above both
 * versions: the server's content, unless `resolveConflict` picks another message.
 */
export async function resolve(
  s: Replication,
  session_id: string,
  pushed: SessionEntry,
  server: SessionEntry,
): Promise<Conflict> {
  const local = (await s.store.getMessage({ session_id, entry_id: pushed.id }))?.entry ?? pushed
  const chosen =
    local.kind === 'message' && server.kind === 'message'
      ? await s.options.resolveConflict?.({ session_id, entry_id: pushed.id, local, server })
      : undefined
  const base = chosen && server.kind === 'message' ? { ...server, message: chosen } : server
  // Written above both versions, so neither replica's revision ever goes down.
  const resolved = { ...base, revision: Math.max(local.revision, server.revision) + 1 } as SessionEntry
  return { session_id, entry_id: pushed.id, local, server, resolved }
}

/** A change refused for good (or a conflict on what cannot be merged), as kept for the app. */
export function rejection(
  s: Replication,
  m: Coalesced,
  r: PushResult & { status: 'rejected' | 'conflict' },
): Rejection {
  return {
    id: m.id,
    change: m.change,
    code: r.status === 'rejected' ? r.code : 'session/invalid_request',
    message: r.status === 'rejected' ? r.message : 'conflict',
    at: s.now(),
  }
}

/** The side write that keeps a rejection until the app acknowledges it. */
export const kept = (r: Rejection) => ({ store: KV, key: `${REJECTED}${r.id}`, value: r })

/** Rejected changes still stored, oldest first. */
export async function rejections(s: Replication): Promise<Rejection[]> {
  const out: Rejection[] = []
  for (const [k, v] of await kv(s)) if (k.startsWith(REJECTED)) out.push(v as Rejection)
  return out.sort((a, b) => a.id - b.id)
}

/** Forgets a rejected change once the app has dealt with it. */
export async function acknowledge(s: Replication, id: number): Promise<void> {
  await s.store.applyReplica([], {
    policy: 'pull',
    side: [{ store: KV, key: `${REJECTED}${id}`, value: undefined }],
  })
}
