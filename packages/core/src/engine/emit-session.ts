import type { Overlay } from './overlay.js'
import type { CreatedEvent, EventEnvelope, JsonObject, SessionMeta, SessionStatus } from '../model/model.js'

// The payloads of session events (created, meta, status, deleted): see `emit.ts`.

export function createdEnvelope(meta: SessionMeta): EventEnvelope<'session::created'> {
  const payload: CreatedEvent = {
    session_id: meta.session_id,
    title: meta.title,
    description: meta.description,
    status: meta.status,
    ...(meta.forked_from !== undefined && { forked_from: meta.forked_from }),
    created_at: meta.created_at,
  }
  return {
    trigger_type: 'session::created',
    payload: Object.freeze(payload),
    session_metadata: meta.metadata,
  }
}

export function emitCreated(d: Overlay, meta: SessionMeta): void {
  d.events.push(createdEnvelope(meta))
}

export function emitMetaUpdated(d: Overlay, meta: SessionMeta, timestamp: number): void {
  d.emit(
    'session::meta-updated',
    {
      session_id: meta.session_id,
      title: meta.title,
      description: meta.description,
      ...(meta.metadata && { metadata: meta.metadata }),
      timestamp,
    },
    meta.metadata,
  )
}

export function emitStatusChanged(
  d: Overlay,
  meta: SessionMeta,
  previous: SessionStatus,
  timestamp: number,
): void {
  d.emit(
    'session::status-changed',
    {
      session_id: meta.session_id,
      status: meta.status,
      previous_status: previous,
      ...(meta.status_reason !== undefined && { status_reason: meta.status_reason }),
      timestamp,
    },
    meta.metadata,
  )
}

export function emitDeleted(
  d: Overlay,
  session_id: string,
  timestamp: number,
  metadata: JsonObject | undefined,
): void {
  d.emit('session::deleted', { session_id, timestamp }, metadata)
}
