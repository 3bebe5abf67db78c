import type { AttachmentAdapter, CompleteAttachment, PendingAttachment } from '@assistant-ui/react'
import type { Store } from '@colloquy/core'
import { attachFile, attachedMeta, isImageFile } from 'chat-kit'

/**
 * assistant-ui's attachments over Colloquy (chat-kit's `attachFile`): an image goes inline as a
 * `data:` URL, any other file into the open chat's attachment store, referenced by the message.
 */
export function colloquyAttachments(store: Store, session: () => string | null): AttachmentAdapter {
  return {
    accept: '*',
    async add({ file }): Promise<PendingAttachment> {
      return {
        id: crypto.randomUUID(),
        type: isImageFile(file) ? 'image' : 'document',
        name: file.name || 'pasted image',
        contentType: file.type,
        file,
        status: { type: 'requires-action', reason: 'composer-send' },
      }
    },
    async send(attachment): Promise<CompleteAttachment> {
      const session_id = session()
      if (!session_id) throw new Error('no chat is open to attach the file to')
      const f = await attachFile(store, session_id, attachment.file)
      const providerMetadata = attachedMeta(f)
      return {
        ...attachment,
        status: { type: 'complete' },
        content: [
          f.kind === 'image'
            ? { type: 'image', image: f.url, filename: f.filename, providerMetadata }
            : { type: 'file', data: f.url, mimeType: f.mediaType, filename: f.filename, providerMetadata },
        ],
      }
    },
    async remove() {
      // Nothing is stored before the message is sent.
    },
  }
}
