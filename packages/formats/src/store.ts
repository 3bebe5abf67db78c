import { checkImport, type SessionEntry, type SessionImport, type SessionMeta, type Store } from '@colloquy/core'
import { FormatError } from './errors.js'
import { importTranscript } from './import.js'
import type { TranscriptInput } from './input.js'
import type { ImportOptions, ImportResult } from './types.js'

export interface ImportIntoResult extends ImportResult {
  /** Sessions now in the store, with their entry counts. */
  written: { session_id: string; entries: number }[]
}

/**
 * Imports every session of an input into a store, all or nothing: every session is checked
 * before the first is written, and if a write fails the sessions this call already wrote are
 * deleted again. Each session itself is written by core, which makes it visible only whole.
 * Progress reports bytes read (`read`), then entries written across all sessions (`write`).
 */
export async function importInto(store: Store, input: TranscriptInput, options: ImportOptions & { chunkSize?: number } = {}): Promise<ImportIntoResult> {
  const result = await importTranscript(input, options)
  const { sessions } = result
  // One session is checked by `store.importSession` before its first write anyway; checking
  // it here too would only double the time and memory of the biggest imports.
  if (sessions.length > 1) for (const s of sessions) checkImport(s)
  for (const s of sessions) {
    if (await store.get({ session_id: s.meta.session_id })) {
      throw new FormatError('format/exists', `session ${s.meta.session_id} is already in the store (imported before?); nothing was written`)
    }
  }
  if (result.attachments.length) {
    result.warnings.push({ code: 'attachments-not-stored', message: `${result.attachments.length} attachment(s) referenced by file blocks are returned in result.attachments; the store has no attachment storage yet` })
  }
  const total = sessions.reduce((n, s) => n + s.entries.length, 0)
  const written: ImportIntoResult['written'] = []
  let before = 0
  try {
    for (const s of sessions) {
      const r = await store.importSession(s, { ...(options.chunkSize && { chunkSize: options.chunkSize }), onProgress: (w) => options.onProgress?.({ phase: 'write', done: before + w, total }) })
      written.push(r)
      before += s.entries.length
    }
  } catch (e) {
    for (const w of written) await store.delete({ session_id: w.session_id }).catch(() => {})
    throw e
  }
  return { ...result, written }
}

/** A stored session, whole (every branch), as the exporters take it. */
export async function readSession(store: Store, session_id: string): Promise<SessionImport> {
  const got = await store.get({ session_id })
  if (!got) throw new FormatError('format/invalid', `session ${session_id} is not in the store`)
  const tree = await new Promise<{ entries: ReadonlyMap<string, SessionEntry>; active_leaf: string | null } | null>((resolve, reject) => {
    let done = false
    const sub = store.tree$(session_id).subscribe({
      next: (t) => {
        if (done) return
        done = true
        resolve(t)
        queueMicrotask(() => sub.unsubscribe())
      },
      error: reject,
    })
  })
  if (!tree) throw new FormatError('format/invalid', `session ${session_id} is not in the store`)
  const meta: SessionMeta = got.meta
  return { meta, entries: [...tree.entries.values()], active_leaf: tree.active_leaf }
}
