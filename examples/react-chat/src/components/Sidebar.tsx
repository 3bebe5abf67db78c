import { useSessions } from '@colloquy/react'
import type { ReactNode } from 'react'
import type { PickedFile, TranscriptImport } from '../data/import-transcripts.js'
import { Icon } from './Icon.js'
import { ImportButton } from './ImportButton.js'
import { ImportPanel } from './ImportPanel.js'
import { SessionRow } from './SessionRow.js'

// Most recently changed first: a chat that gets a message moves to the top, in every tab.
const LIST = { order: 'updated_desc' } as const

interface Props {
  openId: string | null
  onOpen(id: string | null): void
  /** Files picked with "Import…" (dropped ones come in through the app's drop zone). */
  onImport(files: PickedFile[]): void
  imports: Pick<TranscriptImport, 'jobs' | 'dismiss'>
  /** Opens the search palette (as Ctrl/Cmd+K does), for a mouse or a touch screen. */
  onSearch(): void
}

export function Sidebar({ openId, onOpen, onImport, imports, onSearch }: Props): ReactNode {
  const sessions = useSessions(LIST)
  return (
    <aside className="sidebar">
      <div className="brand">
        <img src="/icons/icon.svg" alt="" width={28} height={28} />
        <span>Colloquy</span>
      </div>
      {/* A blank chat: the session is created by its first message, so no empty chats pile up. */}
      <div className="sidebar-actions">
        <button type="button" className="new-chat" onClick={() => onOpen(null)}>
          <Icon name="plus" /> New chat
        </button>
        <ImportButton onFiles={onImport} />
      </div>
      <button type="button" className="new-chat" onClick={onSearch} aria-keyshortcuts="Control+K Meta+K">
        <Icon name="search" /> Search chats
      </button>
      <nav aria-label="Chats" className="session-list">
        {sessions.status === 'loading' && <p className="muted pad">Opening…</p>}
        {sessions.status === 'error' && (
          <p className="error pad">Could not read chats: {String(sessions.error)}</p>
        )}
        {sessions.status === 'ready' && sessions.data.length === 0 && (
          <p className="muted pad">No chats yet.</p>
        )}
        {sessions.status === 'ready' && (
          <ul>
            {sessions.data.map((meta) => (
              <SessionRow
                key={meta.session_id}
                meta={meta}
                open={meta.session_id === openId}
                onOpen={() => onOpen(meta.session_id)}
                onDeleted={() => meta.session_id === openId && onOpen(null)}
              />
            ))}
          </ul>
        )}
      </nav>
      {/* Under the chats they become, where they cover nothing. */}
      <ImportPanel jobs={imports.jobs} onDismiss={imports.dismiss} onOpen={onOpen} />
      <p className="sidebar-foot muted">Stored in this browser · works offline</p>
    </aside>
  )
}
