import type { Draft } from './draft.js'
import type { JsonObject, SessionEntry } from './model.js'

// The event payloads, built in one place for every writer (operations, replication, imports),
// each with the metadata snapshot its filters are evaluated against: here those of messages,
// in `emit-session.ts` those of sessions (fetched with the code that fires them).

export function emitAdded(d: Draft, session_id: string, e: SessionEntry, metadata: JsonObject | undefined): void {
  // The usual case (a message without origin) as one literal, the others as before: same keys, same order.
  const payload =
    e.kind === 'message' && !e.origin
      ? { session_id, entry_id: e.id, parent_id: e.parent_id, message: e.message, timestamp: e.timestamp }
      : {
        session_id,
        entry_id: e.id,
        parent_id: e.parent_id,
        ...(e.kind === 'message' ? { message: e.message } : { custom: { custom_type: e.custom_type, data: e.data } }),
        ...(e.origin && { origin: e.origin }),
        timestamp: e.timestamp,
      }
  d.emit('session::message-added', payload, metadata)
}

export function emitUpdated(d: Draft, session_id: string, e: SessionEntry & { kind: 'message' }, origin: JsonObject | undefined, timestamp: number, metadata: JsonObject | undefined): void {
  d.emit('session::message-updated', { session_id, entry_id: e.id, message: e.message, revision: e.revision, ...(origin && { origin }), timestamp }, metadata)
}
