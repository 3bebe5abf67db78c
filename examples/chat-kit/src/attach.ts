import type { Store } from '@colloquy/core'
import { ATTACHMENT_SCHEME, foldTree } from '@colloquy/parts'
import { firstValueFrom } from 'rxjs'
import { forkChat } from './chat.js'

/**
 * A file attached in a framework example, as the file part its adapter turns into a block: an
 * image travels inline as a `data:` URL (the framework renders it and the model can see it), any
 * other file is put in the session's attachment store and referenced (`colloquy-attachment:`).
 */
export interface AttachedFile {
  kind: 'image' | 'file'
  mediaType: string
  url: string
  filename: string
  size: number
  attachmentId?: string
}

const base64 = (bytes: Uint8Array): string => {
  let s = ''
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

export const isImageFile = (file: Blob): boolean => /^image\/(png|jpe?g|gif|webp|avif)$/.test(file.type)

export async function attachFile(store: Store, session_id: string, file: File): Promise<AttachedFile> {
  const filename = file.name || (isImageFile(file) ? 'pasted image' : 'file')
  if (isImageFile(file)) {
    return {
      kind: 'image',
      mediaType: file.type,
      url: `data:${file.type};base64,${base64(new Uint8Array(await file.arrayBuffer()))}`,
      filename,
      size: file.size,
    }
  }
  const { attachment } = await store.putAttachment({ session_id, file, name: filename })
  return {
    kind: 'file',
    mediaType: attachment.mime,
    url: `${ATTACHMENT_SCHEME}${attachment.attachment_id}`,
    filename,
    size: attachment.size,
    attachmentId: attachment.attachment_id,
  }
}

/** What the adapters read back from a file part's `providerMetadata` to make the stored block. */
export const attachedMeta = (
  f: AttachedFile,
): { colloquy: { kind: string; size: number; attachmentId?: string } } => ({
  colloquy: {
    kind: f.kind,
    size: f.size,
    ...(f.attachmentId !== undefined && { attachmentId: f.attachmentId }),
  },
})

/**
 * Forks at a framework message (a folded node of `@colloquy/parts`: an assistant message and the
 * tool results folded into it), so the fork keeps all of it; resolves with the new session's id.
 */
export async function forkAtMessage(store: Store, session_id: string, message_id: string): Promise<string> {
  const tree = await firstValueFrom(store.tree$(session_id))
  const node = tree ? foldTree(tree).byId.get(message_id) : undefined
  return forkChat(store, session_id, node?.tail ?? message_id)
}
