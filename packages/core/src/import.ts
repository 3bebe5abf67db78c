import type { Engine } from './engine.js'
import { invalid } from './startup.js'
import { ImportCheck } from './import-check.js'
import { beginImport, chunkSizeOf } from './import-writer.js'
import type { SessionEntry, SessionMeta } from './model.js'
import { parseSessionMeta } from './records.js'

// Loaded on first use with `importSession` (see store.ts): the incremental import travels with it.
export { beginImport }

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
 * Checks a whole session without writing it: valid shapes, unique ids, every parent present,
 * no cycle, a leaf that exists. Returns the session as it would be stored.
 */
export function checkImport(data: SessionImport): SessionImport {
  if (typeof data !== 'object' || data === null) throw invalid('import: expected { meta, entries, active_leaf }')
  const parsed = parseSessionMeta(data.meta, 'meta')
  if (!Array.isArray(data.entries)) throw invalid('entries: expected an array')
  const check = new ImportCheck()
  const entries = Object.freeze(data.entries.map((e, i) => check.entry(e, `entries[${i}]`))) as SessionEntry[]
  const { meta, active_leaf } = check.finish(parsed, data.active_leaf ?? null)
  return { meta, entries, active_leaf }
}

/**
 * Writes a whole session through an incremental import (`beginImport`): chunk by chunk, each
 * checked while the one before it is being written, the head last, so it appears whole or not
 * at all.
 */
export async function importSession(engine: Engine, input: SessionImport, options: ImportOptions = {}): Promise<{ session_id: string; entries: number }> {
  if (typeof input !== 'object' || input === null) throw invalid('import: expected { meta, entries, active_leaf }')
  // The meta first: a session refused for its meta writes nothing at all.
  const { session_id } = parseSessionMeta(input.meta, 'meta')
  if (!Array.isArray(input.entries)) throw invalid('entries: expected an array')
  const total = input.entries.length
  const chunk = chunkSizeOf(options)
  const writer = await beginImport(engine, session_id, { chunkSize: chunk, onProgress: (w) => options.onProgress?.(w, total) })
  // Two chunks in flight at most: the next is checked while the previous one is written.
  let previous: Promise<void> = Promise.resolve()
  for (let i = 0; i < total; i += chunk) {
    const next = writer.append(input.entries.slice(i, i + chunk))
    next.catch(() => {})
    await previous
    previous = next
  }
  await previous
  return writer.commit({ meta: input.meta, active_leaf: input.active_leaf ?? null, attachments: input.attachments })
}
