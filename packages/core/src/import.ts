import { sha256Hex } from './bytes.js'
import type { Engine } from './engine.js'
import { SessionError, invalid } from './errors.js'
import type { AttachmentMeta, SessionEntry, SessionMeta } from './model.js'
import { byCreation } from './ops/attachments.js'
import type { BlobWrite } from './storage.js'
import { createdEnvelope } from './emit.js'
import { parseSessionEntry, parseSessionMeta } from './records.js'
import { array } from './validate.js'

/** A whole session as importers and bulk loaders produce it. */
export interface SessionImport {
  meta: SessionMeta
  entries: SessionEntry[]
  active_leaf: string | null
  /**
   * Attachments the entries reference (images and files an importer found), stored with the
   * session: they appear together, so no entry ever points at bytes that are not there.
   */
  attachments?: readonly ImportAttachment[]
}

/** An attachment of an imported session: its id as the entries name it, and its bytes. */
export interface ImportAttachment {
  attachment_id: string
  name: string
  mime: string
  bytes: Blob | Uint8Array
  created_at?: number
}

export interface ImportOptions {
  /** Called after each chunk is on disk with entries written so far and the total. */
  onProgress?: (written: number, total: number) => void
  /** Entries per transaction; default 2000. */
  chunkSize?: number
}

/**
 * Checks a whole session before anything is written: valid shapes, unique ids, every parent
 * present, no cycle, a leaf that exists. A session that fails is never partly visible.
 */
export function checkImport(data: SessionImport): SessionImport {
  if (typeof data !== 'object' || data === null) throw invalid('import: expected { meta, entries, active_leaf }')
  const meta = parseSessionMeta(data.meta, 'meta')
  const entries = array(parseSessionEntry)(data.entries, 'entries')
  const byId = new Map<string, SessionEntry>()
  for (const e of entries) {
    if (byId.has(e.id)) throw invalid(`entries: duplicate entry id ${e.id}`)
    byId.set(e.id, e)
  }
  // Every chain must reach a root; `state` marks entries proven to (2) or being walked (1).
  const state = new Map<string, 1 | 2>()
  for (const start of entries) {
    const walked: string[] = []
    let e: SessionEntry | undefined = start
    while (e && state.get(e.id) !== 2) {
      if (state.get(e.id) === 1) throw invalid(`entries: cycle in the parent chain at ${e.id}`)
      state.set(e.id, 1)
      walked.push(e.id)
      if (e.parent_id === null) break
      const parent = byId.get(e.parent_id)
      if (!parent) throw invalid(`entries: parent ${e.parent_id} of ${e.id} is missing`)
      e = parent
    }
    for (const id of walked) state.set(id, 2)
  }
  const leaf = data.active_leaf ?? null
  if (leaf !== null && !byId.has(leaf)) throw invalid(`active_leaf: entry ${leaf} is not in the session`)
  const message_count = entries.filter((e) => e.kind === 'message').length
  let updated_at = meta.updated_at ?? meta.created_at
  // A loop, not Math.max(...spread): a session can hold more entries than a call has arguments.
  if (meta.updated_at === undefined) for (const e of entries) if (e.timestamp > updated_at) updated_at = e.timestamp
  return { meta: Object.freeze({ ...meta, message_count, updated_at }), entries, active_leaf: leaf }
}

/** Writes a checked session in chunks, the head last, so it appears whole or not at all. */
export async function importSession(engine: Engine, input: SessionImport, options: ImportOptions = {}): Promise<{ session_id: string; entries: number }> {
  const data = checkImport(input)
  const id = data.meta.session_id
  await engine.flush()
  if (engine.state.sessions.has(id)) throw invalid(`session ${id} already exists`)
  const chunk = Math.max(1, options.chunkSize ?? 2000)
  const total = data.entries.length
  const exists = async (reader: { head(id: string): Promise<unknown> }): Promise<void> => {
    if (await reader.head(id)) throw invalid(`session ${id} already exists`)
  }
  try {
    for (let i = 0; i < total; i += chunk) {
      const slice = data.entries.slice(i, i + chunk)
      await engine.storage.transact(async (reader) => {
        await exists(reader)
        return { deleted: new Set(), heads: new Map(), entries: new Map([[id, new Map(slice.map((e) => [e.id, e]))]]), side: [] }
      })
      engine.transactions++
      options.onProgress?.(Math.min(i + chunk, total), total)
    }
  } catch (e) {
    await removeOrphans(engine, id)
    throw e instanceof SessionError ? e : new SessionError('session/storage', `import failed: ${String(e)}`, { cause: e })
  }
  const { metas, blobs } = await attachmentsOf(engine, id, input.attachments ?? [], data.meta.created_at)
  const head = Object.freeze({ meta: data.meta, leaf: data.active_leaf, v: 1, ...(metas.length && { attachments: metas }) })
  try {
    await engine.install(head, data.entries, [createdEnvelope(data.meta)], blobs)
  } catch (e) {
    await removeOrphans(engine, id)
    throw e
  }
  if (total === 0) options.onProgress?.(0, 0)
  return { session_id: id, entries: total }
}

/** Checks and hashes an import's attachments; their bytes are written with the session's head. */
async function attachmentsOf(
  engine: Engine,
  session_id: string,
  list: readonly ImportAttachment[],
  created_at: number,
): Promise<{ metas: AttachmentMeta[]; blobs: BlobWrite[] }> {
  if (!list.length) return { metas: [], blobs: [] }
  if (!engine.storage.attachmentBytes) throw new SessionError('session/storage', `storage ${engine.storage.name} keeps no attachment bytes`)
  const seen = new Set<string>()
  const metas: AttachmentMeta[] = []
  const blobs: BlobWrite[] = []
  for (const [i, a] of list.entries()) {
    const at = `attachments[${i}]`
    if (typeof a.attachment_id !== 'string' || a.attachment_id === '') throw invalid(`${at}.attachment_id: expected a non-empty string`)
    if (seen.has(a.attachment_id)) throw invalid(`${at}: duplicate attachment id ${a.attachment_id}`)
    seen.add(a.attachment_id)
    const name = typeof a.name === 'string' && a.name.trim() !== '' ? a.name.trim() : 'attachment'
    const mime = typeof a.mime === 'string' && a.mime.trim() !== '' ? a.mime : 'application/octet-stream'
    const bytes = a.bytes instanceof Blob ? new Uint8Array(await a.bytes.arrayBuffer()) : a.bytes
    if (!(bytes instanceof Uint8Array)) throw invalid(`${at}.bytes: expected a Blob or a Uint8Array`)
    const max = engine.ctx.limits.max_attachment_bytes
    if (bytes.length > max) throw new SessionError('session/attachment_too_large', `${at} is ${bytes.length} bytes, the limit is ${max}`)
    metas.push(Object.freeze({ attachment_id: a.attachment_id, session_id, name, mime, size: bytes.length, sha256: await sha256Hex(bytes), created_at: a.created_at ?? created_at }))
    blobs.push({ op: 'put', session_id, attachment_id: a.attachment_id, bytes: a.bytes instanceof Blob ? a.bytes : new Blob([bytes as BlobPart], { type: mime }) })
  }
  return { metas: metas.sort(byCreation), blobs }
}

async function removeOrphans(engine: Engine, id: string): Promise<void> {
  try {
    await engine.storage.transact(async (reader) => ({
      deleted: (await reader.head(id)) ? new Set<string>() : new Set([id]),
      heads: new Map(), entries: new Map(), side: [],
    }))
  } catch {
    // The store is failing anyway; entries without a head are never read.
  }
}
