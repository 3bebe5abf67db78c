import type { AgentMessage, MessageEntry } from '@colloquy/core'
import { useEntry, useSession } from '@colloquy/react'
import { messageText, replyEnd } from 'chat-kit'
import { ReplyEndMark } from 'chat-kit/react'
import { memo, useEffect, useRef, useState, type ReactNode } from 'react'
import { useChat } from '../data/chat-context.js'
import { Blocks, ToolCard } from './Blocks.js'
import { BranchPicker } from './BranchPicker.js'
import { Icon, type IconName } from './Icon.js'

interface Props {
  sessionId: string
  entryId: string
  /** This is the reply being streamed right now. */
  live: boolean
  /** A reply is streaming somewhere in this chat: branching waits until it is done. */
  busy: boolean
  /** The newest message on the chat's path: the session's status tells how it ended. */
  last: boolean
  onFork(entryId: string): void
  /** A search opened the chat at this message (when it was picked): shown and highlighted. */
  found?: number
}

function Action({
  icon,
  label,
  onClick,
  disabled,
}: {
  icon: IconName
  label: string
  onClick(): void
  disabled?: boolean
}): ReactNode {
  return (
    <button
      type="button"
      className="action"
      title={label}
      aria-label={label}
      disabled={disabled}
      onClick={onClick}
    >
      <Icon name={icon} size={14} />
    </button>
  )
}

function UserEditor({
  text,
  onCancel,
  onSave,
}: {
  text: string
  onCancel(): void
  onSave(text: string): void
}): ReactNode {
  const [value, setValue] = useState(text)
  return (
    <form className="editor" onSubmit={(e) => (e.preventDefault(), onSave(value))}>
      <textarea
        aria-label="Edit message"
        autoFocus
        value={value}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && onCancel()}
      />
      <div className="editor-buttons">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={!value.trim()}>
          Save &amp; send
        </button>
      </div>
    </form>
  )
}

/** The end of the chat's last reply, as its session tells it (the same in every tab). */
function LastReplyEnd({ sessionId, message }: { sessionId: string; message: AgentMessage }): ReactNode {
  const session = useSession(sessionId)
  return <ReplyEndMark end={replyEnd(message, session.status === 'ready' ? session.data : null, true)} />
}

function usageLine(message: AgentMessage): string | null {
  if (message.role !== 'assistant') return null
  const tokens = message.usage?.output
  return tokens ? `${message.model} · ${tokens} tokens` : message.model
}

/**
 * One message of the transcript. It reads its own entry, so a streamed token re-renders this row
 * and nothing else.
 */
export const MessageRow = memo(function MessageRow({
  sessionId,
  entryId,
  live,
  busy,
  last,
  onFork,
  found,
}: Props): ReactNode {
  const entry = useEntry(sessionId, entryId)
  const { chat, run } = useChat()
  const [editing, setEditing] = useState(false)
  // The row renders once its entry is read: it scrolls itself into view then, and again when
  // the same message is picked again (a new `found`).
  const row = useRef<HTMLLIElement>(null)
  const shown = entry.status === 'ready'
  useEffect(() => {
    if (found !== undefined && shown) row.current?.scrollIntoView({ block: 'center' })
  }, [found, shown])
  if (entry.status !== 'ready' || entry.data?.kind !== 'message') return null
  const { message, parent_id } = entry.data as MessageEntry
  const role = message.role
  const text = messageText(message)

  const actions: ReactNode[] = []
  if (role === 'user' && parent_id !== null) {
    actions.push(
      <Action key="edit" icon="edit" label="Edit message" disabled={busy} onClick={() => setEditing(true)} />,
    )
  }
  if (role === 'assistant') {
    actions.push(
      <Action
        key="regen"
        icon="refresh"
        label="Regenerate reply"
        disabled={busy}
        onClick={() => void run(chat.regenerate(sessionId, entryId))}
      />,
    )
    actions.push(
      <Action
        key="copy"
        icon="copy"
        label="Copy text"
        disabled={live}
        onClick={() => void run(navigator.clipboard.writeText(text))}
      />,
    )
  }
  actions.push(
    <Action key="fork" icon="fork" label="Fork from here" disabled={live} onClick={() => onFork(entryId)} />,
  )

  let body: ReactNode
  if (role === 'user' && editing) {
    body = (
      <UserEditor
        text={text}
        onCancel={() => setEditing(false)}
        onSave={(t) => {
          setEditing(false)
          void run(chat.edit(sessionId, entryId, t))
        }}
      />
    )
  } else if (role === 'function_result') {
    body = <ToolCard name={message.function_id} result={message} sessionId={sessionId} />
  } else if (role === 'assistant' && message.content.length === 0) {
    body = (
      <span className="typing" aria-label="Writing">
        <i />
        <i />
        <i />
      </span>
    )
  } else {
    body = (
      <Blocks
        blocks={
          role === 'custom' && message.display ? [{ type: 'text', text: message.display }] : message.content
        }
        live={live}
        sessionId={sessionId}
      />
    )
  }

  return (
    <li
      ref={row}
      className={`message message-${role}${found !== undefined ? ' message-found' : ''}`}
      data-role={role}
      data-entry-id={entryId}
      aria-busy={live}
      aria-current={found !== undefined ? 'true' : undefined}
    >
      {role === 'assistant' && <img className="avatar" src="/icons/icon.svg" alt="" width={28} height={28} />}
      <div className="message-main">
        <div className="bubble">{body}</div>
        {!editing && (
          <div className="message-foot">
            {role === 'assistant' &&
              !live &&
              (last ? (
                <LastReplyEnd sessionId={sessionId} message={message} />
              ) : (
                <ReplyEndMark end={replyEnd(message, null, false)} />
              ))}
            <BranchPicker sessionId={sessionId} entryId={entryId} disabled={busy} />
            <span className="actions">{actions}</span>
            {role === 'assistant' && !live && <span className="meta muted">{usageLine(message)}</span>}
          </div>
        )}
      </div>
    </li>
  )
})
