import type { JsonObject, SessionEntry } from '../model/model.js'
import { SessionError } from '../model/errors.js'
import { heldSealed, sealedRecordOf } from '../model/sealed-entry.js'
import { messageAttachmentIds } from '../ops/attachments.js'
import { parseSessionEntry } from '../validation/records.js'
import { isPlainObject } from '../validation/validate.js'
import { openJson, sealJson, sealJsonBytes, type KeySource, type SealContext } from './envelope.js'
import {
  checked,
  sealedEntry,
  type SealedCustomEntry,
  type SealedEntry,
  type SealedMessageEntry,
} from './sealed-records.js'

type ClearEntry = Omit<SealedMessageEntry, 'box'> | Omit<SealedCustomEntry, 'box'>

// An entry's box is bound to its session, id and revision, and to every clear field a reader
// relies on: a server that moves it under another parent, role or time, or under a newer
// revision than it was sealed for, makes it unopenable.
const contextOf = (session_id: string, e: ClearEntry): SealContext => ({
  session_id,
  entry_id: e.id,
  revision: e.revision,
  field: 'entry',
  bound: [
    e.parent_id,
    e.kind,
    e.kind === 'message' ? e.role : null,
    e.timestamp,
    e.kind === 'message' ? (e.attachment_ids ?? []) : [],
  ],
})

/**
 * The sealed form of `entry` (a checked entry of `session_id`): its content sealed, in a box of
 * base64 text (`'text'`: JSON records, the wire) or of bytes (`'bytes'`: a browser's storage).
 */
export function sealEntry(
  keys: KeySource,
  session_id: string,
  entry: SessionEntry,
  form?: 'text',
): Promise<SealedEntry & { box: string }>
export function sealEntry(
  keys: KeySource,
  session_id: string,
  entry: SessionEntry,
  form: 'bytes',
): Promise<SealedEntry & { box: ArrayBuffer }>
export async function sealEntry(
  keys: KeySource,
  session_id: string,
  entry: SessionEntry,
  form: 'text' | 'bytes' = 'text',
): Promise<SealedEntry> {
  const seal = form === 'bytes' ? sealJsonBytes : sealJson
  const base = {
    id: entry.id,
    parent_id: entry.parent_id,
    timestamp: entry.timestamp,
    revision: entry.revision,
  }
  const origin: JsonObject = entry.origin ? { origin: entry.origin } : {}
  if (entry.kind === 'message') {
    const { role, ...message } = entry.message
    const ids = [...messageAttachmentIds(entry.message)]
    const clear: ClearEntry = {
      ...base,
      kind: 'message',
      role,
      ...(ids.length > 0 && { attachment_ids: ids }),
    }
    const body: JsonObject = { message: message as unknown as JsonObject, ...origin }
    return { ...clear, box: await seal(keys, body, contextOf(session_id, clear)) } as SealedEntry
  }
  const clear: ClearEntry = { ...base, kind: 'custom' }
  const body: JsonObject = { custom_type: entry.custom_type, data: entry.data, ...origin }
  return { ...clear, box: await seal(keys, body, contextOf(session_id, clear)) } as SealedEntry
}

/**
 * The entry held for a stored sealed record until a read opens it (`model/sealed-entry.ts`): the
 * record's shape checked (its clear fields build the tree at once), its box not opened. Opening
 * it (`openEntry`) checks the rest; a record that fails either is `session/integrity`.
 */
export function holdEntry(stored: unknown): SessionEntry {
  return heldSealed(checked(sealedEntry, stored, 'entry'))
}

/**
 * The entry a stored sealed record (or an entry `holdEntry` made of one) holds, checked: the record's shape, that its box opens for
 * exactly this session, entry, revision and clear fields, and the opened entry's schema.
 * Anything else is `session/integrity` and nothing is returned.
 */
export async function openEntry(keys: KeySource, session_id: string, stored: unknown): Promise<SessionEntry> {
  // Held: its record was checked when it was read.
  const held =
    typeof stored === 'object' && stored !== null ? sealedRecordOf(stored as SessionEntry) : undefined
  const s = (held as SealedEntry | undefined) ?? checked(sealedEntry, stored, 'entry')
  const body = await openJson(keys, s.box, contextOf(session_id, s))
  if (!isPlainObject(body))
    throw new SessionError('session/integrity', `entry ${s.id}: the opened value is not an object`)
  const clear = {
    id: s.id,
    parent_id: s.parent_id,
    timestamp: s.timestamp,
    revision: s.revision,
    origin: body.origin,
  }
  if (s.kind === 'custom') {
    return checked(
      parseSessionEntry,
      { ...clear, kind: 'custom', custom_type: body.custom_type, data: body.data },
      `entry ${s.id}`,
    )
  }
  if (!isPlainObject(body.message))
    throw new SessionError('session/integrity', `entry ${s.id}: the opened message is not an object`)
  const entry = checked(
    parseSessionEntry,
    { ...clear, kind: 'message', message: { ...body.message, role: s.role } },
    `entry ${s.id}`,
  )
  // The clear list is bound in the box; this checks the writer computed it from this content.
  const ids = entry.kind === 'message' ? [...messageAttachmentIds(entry.message)] : []
  if (JSON.stringify(ids) !== JSON.stringify(s.attachment_ids ?? []))
    throw new SessionError('session/integrity', `entry ${s.id}: attachment_ids do not match its content`)
  return entry
}
