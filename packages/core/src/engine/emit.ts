import type { Overlay } from './overlay.js'
import type { JsonObject, MessageAddedEvent, SessionEntry } from '../model/model.js'

// The event payloads, built in one place for every writer (operations, replication, imports),
// each with the metadata snapshot its filters are evaluated against: here those of messages,
// in `emit-session.ts` those of sessions (fetched with the code that fires them).

export function emitAdded(
  d: Overlay,
  session_id: string,
  e: SessionEntry,
  metadata: JsonObject | undefined,
): void {
  // Assigned in key order rather than spread from partial objects: a burst builds 10,000 of these.
  const payload = { session_id, entry_id: e.id, parent_id: e.parent_id } as MessageAddedEvent
  if (e.kind === 'message') payload.message = e.message
  else payload.custom = { custom_type: e.custom_type, data: e.data }
  if (e.origin) payload.origin = e.origin
  payload.timestamp = e.timestamp
  d.emit('session::message-added', payload, metadata)
}

export function emitUpdated(
  d: Overlay,
  session_id: string,
  e: SessionEntry & { kind: 'message' },
  origin: JsonObject | undefined,
  timestamp: number,
  metadata: JsonObject | undefined,
): void {
  d.emit(
    'session::message-updated',
    {
      session_id,
      entry_id: e.id,
      message: e.message,
      revision: e.revision,
      ...(origin && { origin }),
      timestamp,
    },
    metadata,
  )
}
