import { useSession } from '@colloquy/react'
import { displayTitle } from 'chat-kit'
import type { ReactNode } from 'react'
import { Icon } from './Icon.js'
import { StatusDot } from './StatusDot.js'
import { SyncBadge } from './SyncBadge.js'

interface Props {
  sessionId: string | null
  syncConfigured: boolean
  onSettings(): void
  onMenu(): void
  onOpen(id: string): void
}

function ForkedFrom({ sessionId, onOpen }: { sessionId: string; onOpen(id: string): void }): ReactNode {
  const source = useSession(sessionId)
  if (source.status !== 'ready') return null
  return source.data ? (
    <button type="button" className="link" onClick={() => onOpen(sessionId)}>
      forked from {displayTitle(source.data.title)}
    </button>
  ) : (
    <span className="muted">forked from a deleted chat</span>
  )
}

export function TopBar({ sessionId, syncConfigured, onSettings, onMenu, onOpen }: Props): ReactNode {
  const session = useSession(sessionId ?? '')
  const meta = sessionId && session.status === 'ready' ? session.data : null
  return (
    <header className="topbar">
      <button type="button" className="icon-button menu" aria-label="Show chats" onClick={onMenu}>
        <Icon name="menu" />
      </button>
      <div className="topbar-title">
        <h1>{meta ? displayTitle(meta.title) : 'Colloquy'}</h1>
        {meta && (
          <span className="topbar-sub">
            <StatusDot meta={meta} />
            {meta.forked_from && <ForkedFrom sessionId={meta.forked_from} onOpen={onOpen} />}
          </span>
        )}
      </div>
      <SyncBadge configured={syncConfigured} onClick={onSettings} />
      <button
        type="button"
        className="icon-button"
        aria-label="Settings"
        title="Settings"
        onClick={onSettings}
      >
        <Icon name="settings" />
      </button>
    </header>
  )
}
