import type { SessionMeta } from '@colloquy/core'
import { useMessageIds, useStore } from '@colloquy/react'
import { displayTitle } from 'chat-kit'
import { ExportMenu, ForkBadge } from 'chat-kit/react'
import { memo, useCallback, useRef, useState, type ReactNode } from 'react'
import { useChat } from '../data/chat-context.js'
import { Icon } from './Icon.js'
import { StatusDot } from './StatusDot.js'
import { ago } from './time.js'

interface Props {
  meta: SessionMeta
  open: boolean
  onOpen(): void
  onDeleted(): void
}

/** How many messages the chat shows: its active path, not every branch. */
function PathCount({ sessionId }: { sessionId: string }): ReactNode {
  const ids = useMessageIds({ session_id: sessionId })
  if (ids.status !== 'ready') return null
  const n = ids.data.length
  return (
    <span className="count">
      {n} {n === 1 ? 'message' : 'messages'}
    </span>
  )
}

/** One chat in the sidebar: title, status, message count, age; rename, export and delete in place. */
export const SessionRow = memo(function SessionRow({ meta, open, onOpen, onDeleted }: Props): ReactNode {
  const { chat, run, report } = useChat()
  const store = useStore()
  const [mode, setMode] = useState<'view' | 'rename' | 'delete' | 'export'>('view')
  const [title, setTitle] = useState('')
  const [row, setRow] = useState<HTMLLIElement | null>(null)
  const exportButton = useRef<HTMLButtonElement>(null)
  const id = meta.session_id
  const closeMenu = useCallback((refocus: boolean) => {
    setMode('view')
    if (refocus) exportButton.current?.focus()
  }, [])

  if (mode === 'rename') {
    const save = (): void => {
      setMode('view')
      if (title.trim() !== meta.title) void run(chat.rename(id, title))
    }
    return (
      <li className="session editing">
        <input
          aria-label="Chat title"
          autoFocus
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          onBlur={save}
          onKeyDown={(e) => {
            if (e.key === 'Enter') save()
            if (e.key === 'Escape') setMode('view')
          }}
        />
      </li>
    )
  }

  return (
    <li
      className={`session${open ? ' open' : ''}${mode === 'export' ? ' menu-open' : ''}`}
      data-session-id={id}
      data-actions="3"
      ref={setRow}
    >
      <a
        href={`#/c/${encodeURIComponent(id)}`}
        aria-current={open ? 'page' : undefined}
        onClick={(e) => (e.preventDefault(), onOpen())}
      >
        <span className="session-head">
          <span className="session-title">{displayTitle(meta.title)}</span>
          <ForkBadge forked={meta.forked_from !== undefined} />
        </span>
        <span className="session-info">
          <StatusDot meta={meta} />
          <PathCount sessionId={id} />
          <span className="age">{ago(meta.updated_at)}</span>
        </span>
      </a>
      {mode === 'delete' ? (
        <span className="confirm" role="group" aria-label="Confirm delete">
          <button type="button" className="danger" onClick={() => void run(chat.remove(id)).then(onDeleted)}>
            Delete
          </button>
          <button type="button" onClick={() => setMode('view')}>
            Keep
          </button>
        </span>
      ) : (
        <span className="row-actions">
          <button
            type="button"
            title="Rename"
            aria-label="Rename chat"
            onClick={() => (setTitle(meta.title), setMode('rename'))}
          >
            <Icon name="edit" />
          </button>
          <button
            type="button"
            title="Export"
            aria-label="Export chat"
            aria-haspopup="menu"
            aria-expanded={mode === 'export'}
            ref={exportButton}
            onClick={() => setMode((m) => (m === 'export' ? 'view' : 'export'))}
          >
            <Icon name="download" />
          </button>
          <button type="button" title="Delete" aria-label="Delete chat" onClick={() => setMode('delete')}>
            <Icon name="trash" />
          </button>
        </span>
      )}
      {mode === 'export' && store && (
        <ExportMenu store={store} sessionId={id} within={row} onClose={closeMenu} onError={report} />
      )}
    </li>
  )
})
