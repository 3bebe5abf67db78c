import type { ContentBlock, ImportAttachment, SessionEntry, SessionImport } from '@colloquy/core'
import { mimeOrOctet } from '@colloquy/core/wire'
import { fromBase64 } from '../input/base64.js'
import type { ImportedAttachment } from '../types.js'

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'image/avif': 'avif',
}

/**
 * A session ready for a store that keeps attachments: the files the importer found become its
 * attachments, and every inline image (a pasted screenshot, an image in a tool result, inline
 * data) moves into the attachment store too, the block keeping only its mime and the link
 * (`data: ""`, `attachment_id`). Identical images share one attachment. Entries then hold no
 * image bytes, so opening the session never loads them. A type the source file gives that is
 * no media type (`image/*`, a blank, a stray control character) is stored as
 * `application/octet-stream` by core's mime rule: a foreign file's oddity never fails an import.
 */
export function withStoredAttachments(
  session: SessionImport,
  files: readonly ImportedAttachment[],
): SessionImport {
  const id = session.meta.session_id
  const attachments: ImportAttachment[] = files
    .filter((f) => f.session_id === id)
    .map((f) => ({ attachment_id: f.attachment_id, name: f.name, mime: mimeOrOctet(f.mime), bytes: f.data }))
  const taken = new Set(attachments.map((a) => a.attachment_id))
  const byData = new Map<string, string>()
  let n = 0
  const store = (mime: string, data: string): string | undefined => {
    const known = byData.get(data)
    if (known) return known
    let bytes: Uint8Array
    try {
      bytes = fromBase64(data)
    } catch {
      return undefined
    }
    let attachment_id: string
    do attachment_id = `a_img_${++n}`
    while (taken.has(attachment_id))
    taken.add(attachment_id)
    attachments.push({
      attachment_id,
      name: `image-${n}.${EXT[mime] ?? 'bin'}`,
      mime: mimeOrOctet(mime),
      bytes,
    })
    byData.set(data, attachment_id)
    return attachment_id
  }
  const blocks = (list: readonly ContentBlock[]): ContentBlock[] | undefined => {
    let changed = false
    const out = list.map((b): ContentBlock => {
      if (b.type === 'image' && b.data !== '' && b.attachment_id === undefined) {
        const attachment_id = store(b.mime, b.data)
        if (!attachment_id) return b
        changed = true
        return { type: 'image', mime: b.mime, data: '', attachment_id }
      }
      if (b.type === 'function_result') {
        const inner = blocks(b.content)
        if (inner) {
          changed = true
          return { ...b, content: inner }
        }
      }
      return b
    })
    return changed ? out : undefined
  }
  const entries = session.entries.map((e): SessionEntry => {
    if (e.kind !== 'message') return e
    const content = blocks(e.message.content)
    return content ? { ...e, message: { ...e.message, content } as typeof e.message } : e
  })
  return attachments.length ? { ...session, entries, attachments } : session
}
