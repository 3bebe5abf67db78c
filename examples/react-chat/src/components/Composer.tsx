import type { AttachmentMeta } from '@colloquy/core'
import { useAttachmentUrl, useDraft, useStore } from '@colloquy/react'
import { useRef, useState, type ClipboardEvent, type DragEvent, type ReactNode } from 'react'
import { Icon } from './Icon.js'

interface Props {
  /** The open chat: its draft (text and chips) is kept in it, across reloads and tabs. */
  sessionId: string | null
  busy: boolean
  /** Opens a chat for files attached with none open; resolves with its id. */
  ensureSession(): Promise<string | null>
  onSend(text: string, attachments: readonly AttachmentMeta[]): void
  onStop(): void
  onError(message: string): void
}

/** A chip: a thumbnail for an image (its bytes read on demand), a name for anything else. */
function Chip({ attachment, onRemove }: { attachment: AttachmentMeta; onRemove(): void }): ReactNode {
  const image = /^image\//.test(attachment.mime)
  const url = useAttachmentUrl(image ? attachment.session_id : null, image ? attachment.attachment_id : null)
  return (
    <li className="chip" data-attachment={attachment.attachment_id}>
      {image && url ? <img src={url} alt="" /> : <Icon name="file" />}
      <span className="chip-name">{attachment.name}</span>
      <button
        type="button"
        className="chip-remove"
        aria-label={`Remove ${attachment.name}`}
        title="Remove"
        onClick={onRemove}
      >
        <Icon name="x" />
      </button>
    </li>
  )
}

/**
 * Enter sends, Shift+Enter breaks the line; while a reply streams, the button stops it. Files
 * pasted, dropped on it or picked become chips; text and chips are the chat's draft.
 */
export function Composer({ sessionId, busy, ensureSession, onSend, onStop, onError }: Props): ReactNode {
  const store = useStore()
  const draft = useDraft(sessionId ?? '')
  const [local, setLocal] = useState('')
  const picker = useRef<HTMLInputElement>(null)
  const text = sessionId ? draft.text : local
  const setText = sessionId ? draft.setText : setLocal
  const chips = sessionId ? draft.attachments : []
  const canSend = !busy && (text.trim() !== '' || chips.length > 0)

  const send = (): void => {
    if (!canSend) return
    onSend(text, chips)
    // Pending typing must not bring the sent text back as a draft.
    if (sessionId) void draft.clear()
    else setLocal('')
  }
  const attach = async (files: readonly File[]): Promise<void> => {
    if (!store || files.length === 0) return
    const id = sessionId ?? (await ensureSession())
    if (!id) return
    try {
      const added: string[] = []
      for (const file of files)
        added.push(
          (await store.putAttachment({ session_id: id, file, name: file.name || 'pasted image' })).attachment
            .attachment_id,
        )
      const ids = [...chips.map((c) => c.attachment_id), ...added]
      if (id === sessionId) await draft.setAttachments(ids)
      // A chat just opened for these files: its composer reads the draft when it mounts.
      else await store.setDraft({ session_id: id, draft: local, attachment_ids: ids })
    } catch (e) {
      onError(e instanceof Error ? e.message : String(e))
    }
  }
  const remove = async (a: AttachmentMeta): Promise<void> => {
    await draft.setAttachments(
      chips.filter((c) => c.attachment_id !== a.attachment_id).map((c) => c.attachment_id),
    )
    // Unsent chips are nobody else's: free their bytes.
    await store
      ?.deleteAttachment({ session_id: a.session_id, attachment_id: a.attachment_id })
      .catch(() => {})
  }
  const paste = (e: ClipboardEvent): void => {
    const files = [...e.clipboardData.files]
    if (!files.length) return
    e.preventDefault()
    void attach(files)
  }
  const drop = (e: DragEvent): void => {
    if (!e.dataTransfer.types.includes('Files')) return
    // Files dropped here are attachments, not transcripts to import (the app-wide drop zone).
    e.preventDefault()
    e.stopPropagation()
    void attach([...e.dataTransfer.files])
  }

  return (
    <form
      className="composer"
      onSubmit={(e) => (e.preventDefault(), send())}
      onDrop={drop}
      onDragOver={(e) => e.preventDefault()}
    >
      {chips.length > 0 && (
        <ul className="chips" aria-label="Attachments">
          {chips.map((a) => (
            <Chip key={a.attachment_id} attachment={a} onRemove={() => void remove(a)} />
          ))}
        </ul>
      )}
      <div className="composer-row">
        <button
          type="button"
          className="attach"
          aria-label="Attach files"
          title="Attach files"
          onClick={() => picker.current?.click()}
        >
          <Icon name="paperclip" />
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          aria-hidden="true"
          tabIndex={-1}
          onChange={(e) => {
            void attach([...(e.target.files ?? [])])
            e.target.value = ''
          }}
        />
        <textarea
          aria-label="Message"
          placeholder="Message the local model…"
          rows={1}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onPaste={paste}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault()
              send()
            }
          }}
        />
        {busy ? (
          <button type="button" className="send stop" aria-label="Stop reply" title="Stop" onClick={onStop}>
            <Icon name="stop" />
          </button>
        ) : (
          <button type="submit" className="send" aria-label="Send message" title="Send" disabled={!canSend}>
            <Icon name="send" />
          </button>
        )}
      </div>
    </form>
  )
}
