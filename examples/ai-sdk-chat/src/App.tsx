import { memo, useEffect, useMemo, useState, type ReactNode } from 'react'
import { useChat, type Chat, type UseChatHelpers } from '@ai-sdk/react'
import type { UIMessage } from 'ai'
import type { Store } from '@colloquy/core'
import { ColloquyProvider, useBranch, useSessions } from '@colloquy/react'
import { ColloquyChat } from '@colloquy/ai-sdk'
import { createThread } from '@colloquy/parts'
import { LOCAL_MODEL, displayTitle } from 'chat-kit'
import { EndpointForm } from 'chat-kit/endpoint-form'
import { appTransport } from './transport.js'

export function App({ store }: { store: Store }): ReactNode {
  const [session_id, setSession] = useState<string | null>(() => location.hash.slice(1) || null)
  useEffect(() => {
    history.replaceState(null, '', session_id ? `#${session_id}` : location.pathname)
  }, [session_id])
  // A session to talk in from the start: the last one, or a new one.
  useEffect(() => {
    if (session_id) return
    void store.list({ order: 'updated_desc', limit: 1 }).then(async ({ sessions }) => setSession(sessions[0]?.session_id ?? (await createThread(store))))
  }, [store, session_id])
  return (
    <ColloquyProvider store={store}>
      <div className="app">
        <aside className="sidebar">
          <Sidebar store={store} current={session_id} onOpen={setSession} />
          <EndpointForm />
        </aside>
        <main className="main">{session_id && <ChatView key={session_id} store={store} session_id={session_id} />}</main>
      </div>
    </ColloquyProvider>
  )
}

function Sidebar({ store, current, onOpen }: { store: Store; current: string | null; onOpen: (id: string | null) => void }): ReactNode {
  const sessions = useSessions({ order: 'updated_desc', limit: 200 }).data ?? []
  return (
    <nav className="threads">
      <button className="new" onClick={() => void createThread(store).then(onOpen)}>+ New chat</button>
      {sessions.map((s) => (
        <div key={s.session_id} className="thread-item" data-chat data-active={s.session_id === current || undefined}>
          <button className="thread-title" onClick={() => onOpen(s.session_id)}>{displayTitle(s.title)}</button>
          <button className="icon" aria-label="Delete chat" onClick={() => void store.delete({ session_id: s.session_id }).then(() => s.session_id === current && onOpen(null))}>✕</button>
        </div>
      ))}
    </nav>
  )
}

/** One chat per session: a ColloquyChat under useChat, closed when the session changes. */
function ChatView({ store, session_id }: { store: Store; session_id: string }): ReactNode {
  const chat = useMemo(() => new ColloquyChat({ store, session_id, transport: appTransport(store), modelName: LOCAL_MODEL }), [store, session_id])
  useEffect(() => () => chat.close(), [chat])
  const helpers = useChat({ chat: chat as unknown as Chat<UIMessage> })
  const { messages, status, error, sendMessage, stop } = helpers
  const [text, setText] = useState('')
  const busy = status === 'submitted' || status === 'streaming'
  return (
    <div className="thread">
      <div className="viewport">
        {messages.length === 0 && <p className="empty">Ask anything. Replies come from a built-in local model unless an endpoint is set.</p>}
        {messages.map((m) => <Row key={m.id} session_id={session_id} message={m} busy={busy} sendMessage={sendMessage} regenerate={helpers.regenerate} />)}
        {error && <p className="status" role="alert" data-status="error">{error.message.startsWith('interrupted') ? 'Interrupted: ' : ''}{error.message}</p>}
      </div>
      <form className="composer" onSubmit={(e) => { e.preventDefault(); if (text.trim() && !busy) { void sendMessage({ text }); setText('') } }}>
        <textarea className="input" aria-label="Message" placeholder="Message" value={text} onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); e.currentTarget.form?.requestSubmit() } }} />
        {busy ? <button type="button" className="button" onClick={() => void stop()}>Stop</button> : <button className="button primary" type="submit">Send</button>}
      </form>
    </div>
  )
}

/** A message row: re-renders only when its message object changes (a streamed token touches one). */
const Row = memo(function Row({ session_id, message, busy, sendMessage, regenerate }: { session_id: string; message: UIMessage; busy: boolean } & Pick<UseChatHelpers<UIMessage>, 'sendMessage' | 'regenerate'>): ReactNode {
  const [editing, setEditing] = useState<string | null>(null)
  const text = message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
  return (
    <div className={`message ${message.role}`} data-role={message.role}>
      {editing === null ? (
        <div className="bubble">{message.parts.map((p, i) => <Part key={i} part={p} />)}</div>
      ) : (
        <form className="composer edit" onSubmit={(e) => { e.preventDefault(); void sendMessage({ text: editing, messageId: message.id }); setEditing(null) }}>
          <textarea className="input" aria-label="Edit message" value={editing} onChange={(e) => setEditing(e.target.value)} />
          <button type="button" className="button" onClick={() => setEditing(null)}>Cancel</button>
          <button className="button primary" type="submit">Save & send</button>
        </form>
      )}
      <div className="meta">
        {message.role === 'user' && editing === null && <button className="link" disabled={busy} onClick={() => setEditing(text)}>Edit</button>}
        {message.role === 'assistant' && <button className="link" disabled={busy} onClick={() => void regenerate({ messageId: message.id })}>Regenerate</button>}
        <BranchPicker session_id={session_id} entry_id={message.id} />
      </div>
    </div>
  )
})

/** The session's own picker (`useBranch` of @colloquy/react): the chat follows the active leaf. */
function BranchPicker({ session_id, entry_id }: { session_id: string; entry_id: string }): ReactNode {
  const b = useBranch(session_id, entry_id).data
  if (!b || b.count < 2) return null
  return (
    <span className="picker" data-picker>
      <button aria-label="Previous version" disabled={b.index === 0} onClick={() => void b.prev()}>‹</button>
      {b.index + 1} / {b.count}
      <button aria-label="Next version" disabled={b.index === b.count - 1} onClick={() => void b.next()}>›</button>
    </span>
  )
}

function Part({ part }: { part: UIMessage['parts'][number] }): ReactNode {
  if (part.type === 'text') return <span>{part.text}</span>
  if (part.type === 'reasoning') return <details className="reasoning" data-block="thinking"><summary>Thinking</summary>{part.text}</details>
  if (part.type === 'file') {
    return part.mediaType.startsWith('image/') && part.url.startsWith('data:image/')
      ? <img className="picture" src={part.url} alt="" data-block="image" />
      : <span className="file" data-block="file">{part.filename ?? part.mediaType}</span>
  }
  if (part.type.startsWith('tool-') || part.type === 'dynamic-tool') {
    const t = part as { type: string; toolName?: string; input?: unknown; state: string; output?: unknown; errorText?: string }
    const name = t.toolName ?? t.type.slice(5)
    return (
      <div className={t.state === 'output-error' ? 'tool error' : 'tool'} data-block="function_call">
        <code>{name}</code> <span className="args">{JSON.stringify(t.input)}</span>
        {t.state === 'output-available' && <div className="result" data-block="function_result">→ {typeof t.output === 'string' ? t.output : JSON.stringify(t.output)}</div>}
        {t.state === 'output-error' && <div className="result" data-block="function_result">→ {t.errorText}</div>}
      </div>
    )
  }
  return null
}
