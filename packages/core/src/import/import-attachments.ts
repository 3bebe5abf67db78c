import { sha256Hex } from '../util/bytes.js'
import type { Engine } from '../engine/engine.js'
import { SessionError, invalid } from '../model/errors.js'
import type { ImportAttachment } from './types.js'
import type { AttachmentMeta } from '../model/model.js'
import { byCreation } from '../ops/attachments.js'
import type { BlobWrite } from '../storage/seam.js'
import { OCTET_STREAM, checkMime } from '../validation/mime.js'

/** Checks and hashes an import's attachments; their bytes are written with the session's head. */
export async function attachmentsOf(
  engine: Engine,
  session_id: string,
  list: readonly ImportAttachment[],
  created_at: number,
): Promise<{ metas: AttachmentMeta[]; blobs: BlobWrite[] }> {
  if (!Array.isArray(list)) throw invalid('attachments: expected an array')
  if (!list.length) return { metas: [], blobs: [] }
  if (!engine.storage.attachmentBytes)
    throw new SessionError('session/storage', `storage ${engine.storage.name} keeps no attachment bytes`)
  const seen = new Set<string>()
  const metas: AttachmentMeta[] = []
  const blobs: BlobWrite[] = []
  for (const [i, a] of list.entries()) {
    const at = `attachments[${i}]`
    if (typeof a.attachment_id !== 'string' || a.attachment_id === '')
      throw invalid(`${at}.attachment_id: expected a non-empty string`)
    if (seen.has(a.attachment_id)) throw invalid(`${at}: duplicate attachment id ${a.attachment_id}`)
    seen.add(a.attachment_id)
    const name = typeof a.name === 'string' && a.name.trim() !== '' ? a.name.trim() : 'attachment'
    const mime =
      typeof a.mime === 'string' && a.mime.trim() !== '' ? checkMime(a.mime, `${at}.mime`) : OCTET_STREAM
    const bytes = a.bytes instanceof Blob ? new Uint8Array(await a.bytes.arrayBuffer()) : a.bytes
    if (!(bytes instanceof Uint8Array)) throw invalid(`${at}.bytes: expected a Blob or a Uint8Array`)
    const max = engine.ctx.limits.max_attachment_bytes
    if (bytes.length > max)
      throw new SessionError(
        'session/attachment_too_large',
        `${at} is ${bytes.length} bytes, the limit is ${max}`,
      )
    metas.push(
      Object.freeze({
        attachment_id: a.attachment_id,
        session_id,
        name,
        mime,
        size: bytes.length,
        sha256: await sha256Hex(bytes),
        created_at: a.created_at ?? created_at,
      }),
    )
    blobs.push({
      op: 'put',
      session_id,
      attachment_id: a.attachment_id,
      bytes: a.bytes instanceof Blob ? a.bytes : new Blob([bytes as BlobPart], { type: mime }),
    })
  }
  return { metas: metas.sort(byCreation), blobs }
}
