import type { JsonObject, SessionMeta } from '../model/model.js'
import type { MetaField } from '../model/replica-change.js'
import { SessionError } from '../model/errors.js'
import { parseSessionMeta } from '../validation/records.js'
import { isPlainObject } from '../validation/validate.js'
import { openJson, sealJson, type KeySource, type SealContext } from './envelope.js'
import { openAttachmentMeta, sealAttachmentMeta } from './attachment-seal.js'
import { clearKeysOf, splitMetadata, type EncryptionPolicy } from './policy.js'
import {
  SEALED_METADATA_KEY,
  checked,
  sealedMeta,
  type SealedAttachmentMeta,
  type SealedField,
  type SealedMeta,
} from './sealed-records.js'

// A meta's sealed fields are sealed one by one, because replicas merge a meta field by field
// (two devices renaming and marking done offline both keep their edit). A meta has no revision,
// so each field carries its own counter (`rev`), bound in its box: a box replayed under a newer
// counter does not open. Counters only grow; a reader keeping the highest it has seen can also
// refuse a whole older field (docs/encryption.md).

type TextField = 'title' | 'description' | 'status_reason' | 'draft'
const TEXT_FIELDS: readonly TextField[] = ['title', 'description', 'status_reason', 'draft']

const fieldContext = (session_id: string, field: string, rev: number): SealContext => ({
  session_id,
  entry_id: '',
  revision: rev,
  field: `meta.${field}`,
})

export interface SealMetaOptions {
  policy?: EncryptionPolicy
  /** The stored form this meta replaces: its counters are raised, its unchanged boxes kept. */
  previous?: SealedMeta
  /** With `previous`, the fields that changed; the others are taken from `previous` as they are. */
  changed?: readonly MetaField[]
}

const sealedMetadataOf = (m: JsonObject | undefined): SealedField | undefined =>
  m?.[SEALED_METADATA_KEY] as SealedField | undefined

/** The stored form of `meta` (a checked meta): title, description, reason, draft and metadata sealed. */
export async function sealMeta(
  keys: KeySource,
  meta: SessionMeta,
  options: SealMetaOptions = {},
): Promise<SealedMeta> {
  const { previous, changed } = options
  const clearKeys = clearKeysOf(options.policy)
  const sid = meta.session_id
  if (previous && previous.session_id !== sid)
    throw new SessionError(
      'session/invalid_request',
      `previous: the stored form of session ${previous.session_id}`,
    )
  const keep = (f: MetaField): boolean =>
    previous !== undefined && changed !== undefined && !changed.includes(f)
  const nextRev = (old: SealedField | undefined): number => (old ? old.rev + 1 : 0)

  const out: SealedMeta = {
    session_id: sid,
    status: meta.status,
    kind: meta.kind,
    ...(meta.forked_from !== undefined && { forked_from: meta.forked_from }),
    created_at: meta.created_at,
    updated_at: meta.updated_at,
    message_count: meta.message_count,
    title: undefined as unknown as SealedField,
    description: undefined as unknown as SealedField,
  }
  for (const f of TEXT_FIELDS) {
    const old = previous?.[f]
    if (keep(f)) {
      if (old) out[f] = old
      continue
    }
    const value = meta[f]
    if (value === undefined) continue
    const rev = nextRev(old)
    out[f] = { rev, box: await sealJson(keys, value, fieldContext(sid, f, rev)) }
  }
  if (keep('metadata')) {
    if (previous?.metadata) out.metadata = previous.metadata
  } else if (meta.metadata) {
    const { clear, hidden } = splitMetadata(meta.metadata, clearKeys)
    const rev = nextRev(sealedMetadataOf(previous?.metadata))
    const box = await sealJson(keys, hidden, fieldContext(sid, 'metadata', rev))
    out.metadata = { ...clear, [SEALED_METADATA_KEY]: { rev, box } }
  }
  if (keep('draft_attachments')) {
    if (previous?.draft_attachments) out.draft_attachments = previous.draft_attachments
  } else if (meta.draft_attachments) {
    // Attachment metadata never changes: a chip sealed before is kept as it was.
    const held = new Map(previous?.draft_attachments?.map((a) => [a.attachment_id, a]))
    const chips: SealedAttachmentMeta[] = []
    for (const a of meta.draft_attachments)
      chips.push(held.get(a.attachment_id) ?? (await sealAttachmentMeta(keys, a)))
    out.draft_attachments = chips
  }
  return out
}

/**
 * The meta a stored sealed record holds, checked: its shape, every box opening for this session,
 * field and counter, clear metadata keys only those the policy declares, and the opened meta's
 * schema. Anything else is `session/integrity` and nothing is returned.
 */
export async function openMeta(
  keys: KeySource,
  stored: unknown,
  policy?: EncryptionPolicy,
): Promise<SessionMeta> {
  const clearKeys = clearKeysOf(policy)
  const s = checked(sealedMeta, stored, 'meta')
  const sid = s.session_id
  const raw: Record<string, unknown> = {
    session_id: sid,
    status: s.status,
    kind: s.kind,
    forked_from: s.forked_from,
    created_at: s.created_at,
    updated_at: s.updated_at,
    message_count: s.message_count,
  }
  for (const f of TEXT_FIELDS) {
    const field = s[f]
    if (!field) continue
    const value = await openJson(keys, field.box, fieldContext(sid, f, field.rev))
    if (typeof value !== 'string')
      throw new SessionError(
        'session/integrity',
        `meta.${f} of session ${sid}: the opened value is not a string`,
      )
    raw[f] = value
  }
  if (s.metadata) {
    const { [SEALED_METADATA_KEY]: sealed, ...clear } = s.metadata
    for (const k of Object.keys(clear)) {
      if (!clearKeys.has(k))
        throw new SessionError(
          'session/integrity',
          `meta.metadata of session ${sid}: key ${JSON.stringify(k)} is clear but the policy seals it`,
        )
    }
    const field = sealed as unknown as SealedField
    const hidden = await openJson(keys, field.box, fieldContext(sid, 'metadata', field.rev))
    if (
      !isPlainObject(hidden) ||
      Object.keys(hidden).some((k) => clearKeys.has(k) || k === SEALED_METADATA_KEY)
    )
      throw new SessionError(
        'session/integrity',
        `meta.metadata of session ${sid}: the opened value is not sealed metadata`,
      )
    raw.metadata = { ...clear, ...hidden }
  }
  if (s.draft_attachments) {
    const chips = []
    for (const chip of s.draft_attachments) {
      if (chip.session_id !== sid)
        throw new SessionError(
          'session/integrity',
          `meta.draft_attachments of session ${sid}: a chip of session ${chip.session_id}`,
        )
      chips.push(await openAttachmentMeta(keys, chip))
    }
    raw.draft_attachments = chips
  }
  return checked(parseSessionMeta, raw, `meta of session ${sid}`) as SessionMeta
}

/**
 * The sealed fields of `incoming` older than those of `held` (a lower `rev`): a whole older
 * field replayed as it was opens, so a replica refuses these, as it never goes back to a lower
 * revision of an entry. Fields `incoming` lacks are not older (clearing a field is an edit).
 */
export function olderMetaFields(held: SealedMeta, incoming: SealedMeta): MetaField[] {
  const older: MetaField[] = []
  for (const f of TEXT_FIELDS) {
    const a = held[f]
    const b = incoming[f]
    if (a && b && b.rev < a.rev) older.push(f)
  }
  const a = sealedMetadataOf(held.metadata)
  const b = sealedMetadataOf(incoming.metadata)
  if (a && b && b.rev < a.rev) older.push('metadata')
  return older
}
