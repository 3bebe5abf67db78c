import type { SyncState, SyncStatus } from './types.js'

// What the tabs of one database say to each other about replication, over the BroadcastChannel
// `colloquy-sync:<storage name>`. Only the leader replicates; the others learn its status from
// it, and ask it when they join rather than wait for its next change (a tab opened beside an idle
// leader heard nothing until something changed, so its `flush()` never returned). A follower's
// `flush()` is asked of the leader, which answers once it has pushed the outbox and pulled to the
// server's head: a status the follower heard earlier says nothing of what it wrote since.
//
// Another tab is another program (an older version of the app, say): what arrives is checked
// before anything is taken from it, and anything else is ignored.

export type TabMessage =
  /** The leader's status, on each change and when asked. */
  | { readonly kind: 'status'; readonly status: SyncStatus }
  /** A tab that does not lead asks for the leader's status. */
  | { readonly kind: 'ask' }
  /** A tab that does not lead asks the leader to flush; `id` names this request. */
  | { readonly kind: 'flush'; readonly id: string }
  /** The leader has flushed for the request `id`. */
  | { readonly kind: 'flushed'; readonly id: string }

const STATES: ReadonlySet<string> = new Set<SyncState>(['offline', 'connecting', 'syncing', 'idle', 'error'])

/** A request id: the asking sync's client id and a count (`c_k2x9.7`), bounded. */
const ID = /^[0-9a-z_.]{1,64}$/

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

function statusOf(v: unknown): SyncStatus | undefined {
  if (!isRecord(v) || typeof v.state !== 'string' || !STATES.has(v.state)) return undefined
  const { pending, last_synced_at: at, error } = v
  if (typeof pending !== 'number' || !Number.isSafeInteger(pending) || pending < 0) return undefined
  if (at !== undefined && (typeof at !== 'number' || !Number.isFinite(at))) return undefined
  if (error !== undefined && typeof error !== 'string') return undefined
  return {
    state: v.state as SyncState,
    pending,
    leader: false,
    ...(at !== undefined && { last_synced_at: at }),
    ...(error !== undefined && { error: error.slice(0, 1000) }),
  }
}

/** The message `data` is, or undefined if it is none. */
export function tabMessageOf(data: unknown): TabMessage | undefined {
  if (!isRecord(data)) return undefined
  switch (data.kind) {
    case 'status': {
      const status = statusOf(data.status)
      return status && { kind: 'status', status }
    }
    case 'ask':
      return { kind: 'ask' }
    case 'flush':
    case 'flushed':
      return typeof data.id === 'string' && ID.test(data.id) ? { kind: data.kind, id: data.id } : undefined
    default:
      return undefined
  }
}

/** Posts `message` to the other tabs (a channel closed meanwhile drops it). */
export function tell(channel: BroadcastChannel | undefined, message: TabMessage): void {
  try {
    channel?.postMessage(message)
  } catch {
    // Closed: this sync is being closed, and no tab is waiting on what it would say.
  }
}
