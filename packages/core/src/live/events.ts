import { type Observable, Subject, filter, map } from 'rxjs'
import { SessionError } from '../model/errors.js'
import { metadataMatches } from '../model/json.js'
import {
  ROLES,
  TRIGGER_TYPES,
  type EventConfig,
  type EventEnvelope,
  type EventMap,
  type TriggerType,
} from '../model/model.js'
import { checkDepth } from '../validation/limits.js'
import { array, id, jsonObject, oneOf, type Parser } from '../validation/validate.js'

// Keys each trigger type's binding config accepts (contract 4.2).
const allowed: Record<TriggerType, readonly (keyof EventConfig)[]> = {
  'session::created': ['metadata'],
  'session::message-added': ['session_id', 'roles', 'metadata'],
  'session::message-updated': ['session_id', 'roles', 'metadata'],
  'session::status-changed': ['session_id', 'metadata'],
  'session::meta-updated': ['session_id', 'metadata'],
  'session::deleted': ['session_id', 'metadata'],
}
const fieldParsers: Record<keyof EventConfig, Parser<unknown>> = {
  session_id: id,
  roles: array(oneOf(ROLES)),
  metadata: jsonObject,
}

/** Checks a subscriber's config at registration; a rejected config registers nothing. */
export function parseEventConfig(type: TriggerType, config: unknown): EventConfig {
  const bad = (text: string): SessionError =>
    new SessionError('session/invalid_request', `invalid ${type} config: ${text}`)
  if (!(TRIGGER_TYPES as readonly string[]).includes(type))
    throw new SessionError('session/invalid_request', `unknown trigger type ${String(type)}`)
  if (config === null || config === undefined) return {}
  if (typeof config !== 'object' || Array.isArray(config)) throw bad('expected an object')
  try {
    checkDepth(config, '')
  } catch (e) {
    throw bad((e as Error).message.replace(/^session\/invalid_request: /, ''))
  }
  const out: EventConfig = {}
  for (const [key, value] of Object.entries(config)) {
    if (!(allowed[type] as readonly string[]).includes(key))
      throw bad(`unknown field \`${key}\`, expected one of ${allowed[type].join(', ')}`)
    if (value === null || value === undefined) continue
    try {
      ;(out as Record<string, unknown>)[key] = fieldParsers[key as keyof EventConfig](value, key)
    } catch (e) {
      throw bad(e instanceof SessionError ? e.message.replace(/^session\/invalid_request: /, '') : String(e))
    }
  }
  return out
}

export function eventMatches(envelope: EventEnvelope, config: EventConfig): boolean {
  const p = envelope.payload as { session_id: string; message?: { role: string } }
  if (config.session_id != null && p.session_id !== config.session_id) return false
  // Custom entries carry no role, so they never match a roles filter (even ["custom"]).
  if (config.roles != null && !(p.message && config.roles.includes(p.message.role as never))) return false
  return metadataMatches(config.metadata, envelope.session_metadata)
}

/** The store's event stream: every committed change's events, local, other tabs' and remote. */
export class EventBus {
  readonly envelopes = new Subject<EventEnvelope>()

  on<T extends TriggerType>(type: T, config?: EventConfig | null): Observable<EventMap[T]> {
    const parsed = parseEventConfig(type, config)
    return this.envelopes.pipe(
      filter((e): e is EventEnvelope<T> => e.trigger_type === type && eventMatches(e, parsed)),
      map((e) => e.payload),
    )
  }

  publish(envelopes: readonly EventEnvelope[]): void {
    for (const e of envelopes) this.envelopes.next(e)
  }
}
