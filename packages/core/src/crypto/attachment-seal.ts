import type { AttachmentMeta } from '../model/model.js'
import { SessionError } from '../model/errors.js'
import { sha256Hex } from '../util/bytes.js'
import { parseAttachmentMeta } from '../validation/records.js'
import { isPlainObject } from '../validation/validate.js'
import { openBytes, openJson, sealBytes, sealJson, type KeySource, type SealContext } from './envelope.js'
import { isChunked, openChunks, openChunksWhole, sealChunksToBlob } from './attachment-chunks.js'
import { checked, sealedAttachmentMeta, type SealedAttachmentMeta } from './sealed-records.js'

// Attachments never change once put: their boxes are bound to revision 0 of their own id.
const metaContext = (session_id: string, attachment_id: string, created_at: number): SealContext => ({
  session_id,
  entry_id: attachment_id,
  revision: 0,
  field: 'attachment.meta',
  bound: [created_at],
})
const bytesContext = (session_id: string, attachment_id: string): SealContext => ({
  session_id,
  entry_id: attachment_id,
  revision: 0,
  field: 'attachment.bytes',
})

/** The stored form of an attachment's metadata: name, mime, size and sha256 sealed. */
export async function sealAttachmentMeta(
  keys: KeySource,
  meta: AttachmentMeta,
): Promise<SealedAttachmentMeta> {
  const { attachment_id, session_id, created_at } = meta
  const box = await sealJson(
    keys,
    { name: meta.name, mime: meta.mime, size: meta.size, sha256: meta.sha256 },
    metaContext(session_id, attachment_id, created_at),
  )
  return { attachment_id, session_id, created_at, box }
}

/** An attachment's metadata from its stored form, checked (`session/integrity` otherwise). */
export async function openAttachmentMeta(keys: KeySource, stored: unknown): Promise<AttachmentMeta> {
  const s = checked(sealedAttachmentMeta, stored, 'attachment')
  const body = await openJson(keys, s.box, metaContext(s.session_id, s.attachment_id, s.created_at))
  if (!isPlainObject(body))
    throw new SessionError(
      'session/integrity',
      `attachment ${s.attachment_id}: the opened value is not an object`,
    )
  return checked(
    parseAttachmentMeta,
    {
      attachment_id: s.attachment_id,
      session_id: s.session_id,
      name: body.name,
      mime: body.mime,
      size: body.size,
      sha256: body.sha256,
      created_at: s.created_at,
    },
    `attachment ${s.attachment_id}`,
  )
}

/**
 * An attachment's bytes in one envelope, padded and sealed, bound to its session and id: the
 * layout before the chunked one (`sealAttachmentData`), kept so what was sealed so still opens.
 */
export function sealAttachmentBytes(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  bytes: Uint8Array,
): Promise<Uint8Array> {
  return sealBytes(keys, bytes, bytesContext(session_id, attachment_id))
}

/**
 * An attachment's bytes from their stored form. With `meta` (opened from the same store), the
 * bytes must also have its size and sha256.
 */
export async function openAttachmentBytes(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  sealed: Uint8Array,
  meta?: AttachmentMeta,
): Promise<Uint8Array> {
  const bytes = await openBytes(keys, sealed, bytesContext(session_id, attachment_id))
  if (
    meta &&
    (meta.attachment_id !== attachment_id ||
      meta.size !== bytes.length ||
      meta.sha256 !== (await sha256Hex(bytes)))
  )
    throw new SessionError(
      'session/integrity',
      `attachment ${attachment_id}: the bytes are not those its metadata names`,
    )
  return bytes
}

/**
 * An attachment's bytes as stored and synced: sealed in chunks (attachment-chunks.ts), read
 * from `blob` a chunk at a time (or taken from its bytes already read), the sealed chunks a Blob
 * of their own (never joined).
 */
export function sealAttachmentData(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  blob: Blob | Uint8Array,
): Promise<Blob> {
  return sealChunksToBlob(keys, session_id, attachment_id, blob)
}

/**
 * The clear bytes of an attachment as pieces in order (a Blob is made of them without joining
 * them): the chunked layout, or the single envelope every attachment was sealed in before it,
 * which still opens.
 */
export async function openAttachmentData(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  sealed: Uint8Array,
): Promise<Uint8Array[]> {
  return isChunked(sealed)
    ? openChunks(keys, session_id, attachment_id, sealed)
    : [await openAttachmentBytes(keys, session_id, attachment_id, sealed)]
}

/**
 * `openAttachmentData` as one buffer of exactly the clear bytes (for a read that answers them
 * whole): the chunks are copied into it as they open rather than joined afterwards, into
 * `ready` when it has their length.
 */
export async function openAttachmentWhole(
  keys: KeySource,
  session_id: string,
  attachment_id: string,
  sealed: Uint8Array,
  ready?: Uint8Array,
): Promise<Uint8Array> {
  return isChunked(sealed)
    ? openChunksWhole(keys, session_id, attachment_id, sealed, ready)
    : openAttachmentBytes(keys, session_id, attachment_id, sealed)
}
