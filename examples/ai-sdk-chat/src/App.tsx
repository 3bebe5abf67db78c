import {
  memo,
  useCallback,
  useEffect,
  useMemo,
  useState,
  type ClipboardEvent,
  type DragEvent,
  type ReactNode,
} from 'react'
import { useChat, type Chat, type UseChatHelpers } from '@ai-sdk/react'
import type { FileUIPart, UIMessage } from 'ai'
import type { SessionMeta, Store } from '@colloquy/core'
import { ColloquyProvider, useBranch, useEntry, useSession, useSessions } from '@colloquy/react'
import { ColloquyChat } from '@colloquy/ai-sdk'
import { createThread } from '@colloquy/parts'
import {
  LOCAL_MODEL,
  attachFile,
  attachedMeta,
  displayTitle,
  failedReply,
  forkAtMessage,
  isImageFile,
  replyEnd,
} from 'chat-kit'
import { EndpointForm, ExportMenu, ForkBadge, Paperclip, ReplyEndMark, useFollowNewest } from 'chat-kit/react'
import { appTransport } from './transport.js'

export function App({ store }: { store: Store }): ReactNode {
  const [session_id, setSession] = useState<string | null>(() => location.hash.slice(1) || null)
  useEffect(() => {
    history.replaceState(null, '', session_id ? `#${session_id}` : location.pathname)
  }, [session_id])
  // A session to talk in from the start: the last one, or a new one.
  useEffect(() => {
    if (session_id) return
    void store
      .list({ order: 'updated_desc', limit: 1 })
      .then(async ({ sessions }) => setSession(sessions[0]?.session_id ?? (await createThread(store))))
  }, [store, session_id])
  return (
    <ColloquyProvider store={store}>
      <div className="app">
        <aside className="sidebar">
          <Sidebar store={store} current={session_id} onOpen={setSession} />
          <EndpointForm />
        </aside>
        <main className="main">
          {session_id && (
            <ChatView key={session_id} store={store} session_id={session_id} onOpen={setSession} />
          )}
        </main>
      </div>
    </ColloquyProvider>
  )
}

function Sidebar({
  store,
  current,
  onOpen,
}: {
  store: Store
  current: string | null
  onOpen: (id: string | null) => void
}): ReactNode {
  const sessions = useSessions({ order: 'updated_desc', limit: 200 }).data ?? []
  return (
    <nav className="threads" aria-label="Chats">
      <button className="new" onClick={() => void createThread(store).then(onOpen)}>
        + New chat
      </button>
      {sessions.map((s) => (
        <ThreadItem
          key={s.session_id}
          store={store}
          meta={s}
          active={s.session_id === current}
          onOpen={onOpen}
        />
      ))}
    </nav>
  )
}

/** A chat in the list: its title (and fork mark), export and delete. */
function ThreadItem({
  store,
  meta,
  active,
  onOpen,
}: {
  store: Store
  meta: SessionMeta
  active: boolean
  onOpen: (id: string | null) => void
}): ReactNode {
  const [menu, setMenu] = useState(false)
  const [row, setRow] = useState<HTMLDivElement | null>(null)
  const close = useCallback(() => setMenu(false), [])
  const report = useCallback((message: string) => alert(message), [])
  return (
    <div className="thread-item" data-chat data-active={active || undefined} ref={setRow}>
      <button className="thread-trigger thread-title" onClick={() => onOpen(meta.session_id)}>
        <span className="thread-title">{displayTitle(meta.title)}</span>
        <ForkBadge forked={meta.forked_from !== undefined} />
      </button>
      <button
        className="icon"
        aria-label="Export chat"
        aria-haspopup="menu"
        aria-expanded={menu}
        onClick={() => setMenu((m) => !m)}
      >
        ⤓
      </button>
      <button
        className="icon"
        aria-label="Delete chat"
        onClick={() => void store.delete({ session_id: meta.session_id }).then(() => active && onOpen(null))}
      >
        ✕
      </button>
      {menu && (
        <ExportMenu store={store} sessionId={meta.session_id} within={row} onClose={close} onError={report} />
      )}
    </div>
  )
}

/** One chat per session: a ColloquyChat under useChat, closed when the session changes. */
function ChatView({
  store,
  session_id,
  onOpen,
}: {
  store: Store
  session_id: string
  onOpen: (id: string) => void
}): ReactNode {
  const chat = useMemo(
    () => new ColloquyChat({ store, session_id, transport: appTransport(store), modelName: LOCAL_MODEL }),
    [store, session_id],
  )
  useEffect(() => () => chat.close(), [chat])
  const helpers = useChat({ chat: chat as unknown as Chat<UIMessage> })
  const { messages, status, error, sendMessage, stop } = helpers
  const session = useSession(session_id)
  const meta = session.status === 'ready' ? session.data : null
  const { scroller, content } = useFollowNewest<HTMLDivElement, HTMLDivElement>()
  const [text, setText] = useState('')
  const [files, setFiles] = useState<File[]>([])
  const [failure, setFailure] = useState<string | null>(null)
  const busy = status === 'submitted' || status === 'streaming'
  const lastReply = messages.findLastIndex((m) => m.role === 'assistant')
  const fork = useCallback(
    (id: string) =>
      void forkAtMessage(store, session_id, id).then(onOpen, (e: unknown) => setFailure(String(e))),
    [store, session_id, onOpen],
  )
  const send = async (): Promise<void> => {
    if (busy || (!text.trim() && files.length === 0)) return
    try {
      const parts: FileUIPart[] = (await Promise.all(files.map((f) => attachFile(store, session_id, f)))).map(
        (f) => ({
          type: 'file',
          mediaType: f.mediaType,
          url: f.url,
          filename: f.filename,
          providerMetadata: attachedMeta(f),
        }),
      )
      setText('')
      setFiles([])
      await sendMessage({ text, files: parts })
    } catch (e) {
      setFailure(e instanceof Error ? e.message : String(e))
    }
  }
  const add = (picked: readonly File[]): void => setFiles((f) => [...f, ...picked])
  const paste = (e: ClipboardEvent): void => {
    if (e.clipboardData.files.length === 0) return
    e.preventDefault()
    add([...e.clipboardData.files])
  }
  const drop = (e: DragEvent): void => {
    if (!e.dataTransfer.types.includes('Files')) return
    e.preventDefault()
    add([...e.dataTransfer.files])
  }
  // A reply's end is marked on the message; a request that failed before any reply, here.
  const shown = failure ?? (error && meta?.status !== 'error' ? error.message : null)
  return (
    <div className="thread">
      <div className="viewport" ref={scroller}>
        <div ref={content}>
          {messages.length === 0 && (
            <p className="empty">
              Ask anything. Replies come from a built-in local model unless an endpoint is set.
            </p>
          )}
          {messages.map((m, i) => (
            <Row
              key={m.id}
              session_id={session_id}
              message={m}
              busy={busy}
              meta={i === lastReply && !busy ? meta : null}
              last={i === lastReply}
              sendMessage={sendMessage}
              regenerate={helpers.regenerate}
              onFork={fork}
            />
          ))}
          {shown && (
            <p className="meta" role="alert">
              <ReplyEndMark end={failedReply(shown)} /> {shown}
            </p>
          )}
        </div>
      </div>
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault()
          void send()
        }}
        onDrop={drop}
        onDragOver={(e) => e.preventDefault()}
      >
        {files.length > 0 && (
          <ul className="chips" aria-label="Attachments">
            {files.map((f, i) => (
              <Chip key={i} file={f} onRemove={() => setFiles((all) => all.filter((x) => x !== f))} />
            ))}
          </ul>
        )}
        <label className="attach" title="Attach files" aria-label="Attach files">
          <Paperclip />
          <input
            type="file"
            multiple
            hidden
            onChange={(e) => {
              add([...(e.target.files ?? [])])
              e.target.value = ''
            }}
          />
        </label>
        <textarea
          className="input"
          aria-label="Message"
          placeholder="Message"
          rows={1}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onPaste={paste}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault()
              e.currentTarget.form?.requestSubmit()
            }
          }}
        />
        {busy ? (
          <button type="button" className="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button className="button primary" type="submit">
            Send
          </button>
        )}
      </form>
    </div>
  )
}

/** A picked or pasted file waiting to be sent: a thumbnail for an image, its name for anything else. */
function Chip({ file, onRemove }: { file: File; onRemove: () => void }): ReactNode {
  const [url, setUrl] = useState<string | null>(null)
  useEffect(() => {
    if (!isImageFile(file)) return
    const u = URL.createObjectURL(file)
    setUrl(u)
    return () => URL.revokeObjectURL(u)
  }, [file])
  const name = file.name || 'pasted image'
  return (
    <li className="chip">
      {url && <img src={url} alt="" />}
      <span className="chip-name">{name}</span>
      <button type="button" className="chip-remove" aria-label={`Remove ${name}`} onClick={onRemove}>
        ×
      </button>
    </li>
  )
}

/** A message row: re-renders only when its message object changes (a streamed token touches one). */
const Row = memo(function Row({
  session_id,
  message,
  busy,
  meta,
  last,
  sendMessage,
  regenerate,
  onFork,
}: {
  session_id: string
  message: UIMessage
  busy: boolean
  /** The session, for the chat's last reply: its status tells how that reply ended. */
  meta: SessionMeta | null
  last: boolean
  onFork: (id: string) => void
} & Pick<UseChatHelpers<UIMessage>, 'sendMessage' | 'regenerate'>): ReactNode {
  const [editing, setEditing] = useState<string | null>(null)
  const text = message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
  return (
    <div className={`message ${message.role}`} data-role={message.role}>
      {editing === null ? (
        <div className="bubble">
          {message.parts.map((p, i) => (
            <Part key={i} part={p} />
          ))}
        </div>
      ) : (
        <form
          className="composer edit"
          onSubmit={(e) => {
            e.preventDefault()
            void sendMessage({ text: editing, messageId: message.id })
            setEditing(null)
          }}
        >
          <textarea
            className="input"
            aria-label="Edit message"
            value={editing}
            onChange={(e) => setEditing(e.target.value)}
          />
          <button type="button" className="button" onClick={() => setEditing(null)}>
            Cancel
          </button>
          <button className="button primary" type="submit">
            Save & send
          </button>
        </form>
      )}
      <div className="meta">
        {message.role === 'user' && editing === null && (
          <button className="link" disabled={busy} onClick={() => setEditing(text)}>
            Edit
          </button>
        )}
        {message.role === 'assistant' && (
          <button className="link" disabled={busy} onClick={() => void regenerate({ messageId: message.id })}>
            Regenerate
          </button>
        )}
        <button className="link" disabled={busy} onClick={() => onFork(message.id)}>
          Fork
        </button>
        <BranchPicker session_id={session_id} entry_id={message.id} />
        {message.role === 'assistant' && !(busy && last) && (
          <RowEnd session_id={session_id} entry_id={message.id} meta={meta} last={last} />
        )}
      </div>
    </div>
  )
})

/** How the reply ended, from its stored entry and, for the last reply, the session (chat-kit's `replyEnd`). */
function RowEnd({
  session_id,
  entry_id,
  meta,
  last,
}: {
  session_id: string
  entry_id: string
  meta: SessionMeta | null
  last: boolean
}): ReactNode {
  const entry = useEntry(session_id, entry_id).data
  return <ReplyEndMark end={replyEnd(entry?.kind === 'message' ? entry.message : null, meta, last)} />
}

/** The session's own picker (`useBranch` of @colloquy/react): the chat follows the active leaf. */
function BranchPicker({ session_id, entry_id }: { session_id: string; entry_id: string }): ReactNode {
  const b = useBranch(session_id, entry_id).data
  if (!b || b.count < 2) return null
  return (
    <span className="picker" data-picker>
      <button aria-label="Previous version" disabled={b.index === 0} onClick={() => void b.prev()}>
        ‹
      </button>
      {b.index + 1} / {b.count}
      <button aria-label="Next version" disabled={b.index === b.count - 1} onClick={() => void b.next()}>
        ›
      </button>
    </span>
  )
}

function Part({ part }: { part: UIMessage['parts'][number] }): ReactNode {
  if (part.type === 'text') return <span>{part.text}</span>
  if (part.type === 'reasoning')
    return (
      <details className="reasoning" data-block="thinking">
        <summary>Thinking</summary>
        {part.text}
      </details>
    )
  if (part.type === 'file') {
    return part.mediaType.startsWith('image/') && part.url.startsWith('data:image/') ? (
      <img className="picture" src={part.url} alt="" data-block="image" />
    ) : (
      <span className="file" data-block="file">
        {part.filename ?? part.mediaType}
      </span>
    )
  }
  if (part.type.startsWith('tool-') || part.type === 'dynamic-tool') {
    const t = part as {
      type: string
      toolName?: string
      input?: unknown
      state: string
      output?: unknown
      errorText?: string
    }
    const name = t.toolName ?? t.type.slice(5)
    return (
      <div className={t.state === 'output-error' ? 'tool error' : 'tool'} data-block="function_call">
        <code>{name}</code> <span className="args">{JSON.stringify(t.input)}</span>
        {t.state === 'output-available' && (
          <div className="result" data-block="function_result">
            → {typeof t.output === 'string' ? t.output : JSON.stringify(t.output)}
          </div>
        )}
        {t.state === 'output-error' && (
          <div className="result" data-block="function_result">
            → {t.errorText}
          </div>
        )}
      </div>
    )
  }
  return null
}
