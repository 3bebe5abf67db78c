import type { Engine } from '../engine/engine.js'
import { invalid } from '../model/errors.js'
import { ImportCheck } from './import-check.js'
import { beginImport, chunkSizeOf } from './import-writer.js'
import type { SessionEntry } from '../model/model.js'
import { parseSessionMeta } from '../validation/records.js'
import type { ImportOptions, SessionImport } from './types.js'

export type { ImportAttachment, ImportOptions, SessionImport } from './types.js'

// Loaded on first use with `importSession` (see store.ts): the incremental import travels with it.
export { beginImport }

/**
 * Checks a whole session without writing it: valid shapes, unique ids, every parent present,
 * no cycle, a leaf that exists. Returns the session as it would be stored.
 */
export function checkImport(data: SessionImport): SessionImport {
  if (typeof data !== 'object' || data === null)
    throw invalid('import: expected { meta, entries, active_leaf }')
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
export async function importSession(
  engine: Engine,
  input: SessionImport,
  options: ImportOptions = {},
): Promise<{ session_id: string; entries: number }> {
  if (typeof input !== 'object' || input === null)
    throw invalid('import: expected { meta, entries, active_leaf }')
  // The meta first: a session refused for its meta writes nothing at all.
  const { session_id } = parseSessionMeta(input.meta, 'meta')
  if (!Array.isArray(input.entries)) throw invalid('entries: expected an array')
  const total = input.entries.length
  const chunk = chunkSizeOf(options)
  const writer = await beginImport(engine, session_id, {
    chunkSize: chunk,
    onProgress: (w) => options.onProgress?.(w, total),
  })
  // Two chunks in flight at most: the next is checked while the previous one is written.
  let previous: Promise<void> = Promise.resolve()
  for (let i = 0; i < total; i += chunk) {
    const next = writer.append(input.entries.slice(i, i + chunk))
    next.catch(() => {})
    await previous
    previous = next
  }
  await previous
  return writer.commit({
    meta: input.meta,
    active_leaf: input.active_leaf ?? null,
    attachments: input.attachments,
  })
}
