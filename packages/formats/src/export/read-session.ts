import type {
  ContentBlock,
  ImportAttachment,
  SessionEntry,
  SessionImport,
  SessionMeta,
  Store,
} from '@colloquy/core'
import { mimeOrOctet } from '@colloquy/core/wire'
import { FormatError } from '../errors.js'

/** A stored session, whole (every branch), as the exporters take it. */
export async function readSession(store: Store, session_id: string): Promise<SessionImport> {
  const got = await store.get({ session_id })
  if (!got) throw new FormatError('format/invalid', `session ${session_id} is not in the store`)
  const tree = await new Promise<{
    entries: ReadonlyMap<string, SessionEntry>
    active_leaf: string | null
  } | null>((resolve, reject) => {
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
    if (blob)
      attachments.push({
        attachment_id: a.attachment_id,
        name: a.name,
        mime: mimeOrOctet(a.mime),
        bytes: new Uint8Array(await blob.arrayBuffer()),
        created_at: a.created_at,
      })
  }
  return { meta, entries, active_leaf: tree.active_leaf, ...(attachments.length && { attachments }) }
}

/**
 * Images whose bytes live in the attachment store (`data: ""` with an `attachment_id`) get their
 * bytes back, so exporters write them (an OPA archive carries them as attachments).
 */
async function withImageBytes(
  store: Store,
  session_id: string,
  entries: SessionEntry[],
): Promise<SessionEntry[]> {
  const cache = new Map<string, string | null>()
  const bytesOf = async (attachment_id: string): Promise<string | null> => {
    if (!cache.has(attachment_id))
      cache.set(attachment_id, (await store.getAttachment({ session_id, attachment_id }))?.data ?? null)
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
    out.push(
      content && e.kind === 'message' ? { ...e, message: { ...e.message, content } as typeof e.message } : e,
    )
  }
  return out
}
