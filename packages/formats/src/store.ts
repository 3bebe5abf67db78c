import { mimeOrOctet, type ContentBlock, type ImportAttachment, type SessionEntry, type SessionImport, type SessionMeta, type Store } from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { FormatError } from './errors.js'
import { importTranscript } from './import.js'
import type { TranscriptInput } from './input.js'
import { withStoredAttachments } from './store-attachments.js'
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
  // A store that keeps attachment bytes gets the files and the inline images as attachments;
  // one that does not (a storage without bytes) keeps the images inline and is told about the files.
  const keepsBytes = typeof store.storage.attachmentBytes === 'function'
  const toWrite = keepsBytes ? sessions.map((s) => withStoredAttachments(s, result.attachments)) : sessions
  if (!keepsBytes && result.attachments.length) {
    result.warnings.push({ code: 'attachments-not-stored', message: `${result.attachments.length} attachment(s) referenced by file blocks are returned in result.attachments; this store's storage keeps no attachment bytes` })
  }
  const total = sessions.reduce((n, s) => n + s.entries.length, 0)
  const written: ImportIntoResult['written'] = []
  let before = 0
  try {
    for (const s of toWrite) {
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
  const entries = await withImageBytes(store, session_id, [...tree.entries.values()])
  // The bytes of file attachments the entries reference, for exporters that carry files.
  const referenced = new Set<string>()
  const files = (blocks: readonly ContentBlock[]): void => {
    for (const b of blocks) {
      if (b.type === 'file') referenced.add(b.attachment_id)
      else if (b.type === 'function_result') files(b.content)
    }
  }
  for (const e of entries) if (e.kind === 'message') files(e.message.content)
  const attachments: ImportAttachment[] = []
  for (const a of (await store.listAttachments({ session_id })).attachments) {
    if (!referenced.has(a.attachment_id)) continue
    const blob = await store.getAttachmentBlob(session_id, a.attachment_id)
    if (blob) attachments.push({ attachment_id: a.attachment_id, name: a.name, mime: mimeOrOctet(a.mime), bytes: new Uint8Array(await blob.arrayBuffer()), created_at: a.created_at })
  }
  return { meta, entries, active_leaf: tree.active_leaf, ...(attachments.length && { attachments }) }
}

/**
 * Images whose bytes live in the attachment store (`data: ""` with an `attachment_id`) get their
 * bytes back, so exporters write them (an OPA archive carries them as attachments).
 */
async function withImageBytes(store: Store, session_id: string, entries: SessionEntry[]): Promise<SessionEntry[]> {
  const cache = new Map<string, string | null>()
  const bytesOf = async (attachment_id: string): Promise<string | null> => {
    if (!cache.has(attachment_id)) cache.set(attachment_id, (await store.getAttachment({ session_id, attachment_id }))?.data ?? null)
    return cache.get(attachment_id)!
  }
  const fill = async (blocks: readonly ContentBlock[]): Promise<ContentBlock[] | undefined> => {
    let changed = false
    const out: ContentBlock[] = []
    for (const b of blocks) {
      if (b.type === 'image' && b.data === '' && b.attachment_id !== undefined) {
        const data = await bytesOf(b.attachment_id)
        if (data !== null) {
          changed = true
          out.push({ ...b, data })
          continue
        }
      }
      if (b.type === 'function_result') {
        const inner = await fill(b.content)
        if (inner) {
          changed = true
          out.push({ ...b, content: inner })
          continue
        }
      }
      out.push(b)
    }
    return changed ? out : undefined
  }
  const out: SessionEntry[] = []
  for (const e of entries) {
    const content = e.kind === 'message' ? await fill(e.message.content) : undefined
    out.push(content && e.kind === 'message' ? { ...e, message: { ...e.message, content } as typeof e.message } : e)
  }
  return out
}
