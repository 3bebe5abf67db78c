import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react'
import type { Store } from '@colloquy/core'
import { ColloquyProvider, useEntry, useSession } from '@colloquy/react'
import { useColloquyRuntime } from '@colloquy/assistant-ui'
import { createThread } from '@colloquy/parts'
import {
  ActionBarPrimitive,
  AssistantRuntimeProvider,
  AttachmentPrimitive,
  BranchPickerPrimitive,
  ComposerPrimitive,
  MessagePrimitive,
  ThreadListItemPrimitive,
  ThreadListPrimitive,
  ThreadPrimitive,
  useAuiState,
  type ChatModelAdapter,
  type ToolCallMessagePartProps,
} from '@assistant-ui/react'
import { LOCAL_MODEL, forkAtMessage, isImageFile, replyEnd } from 'chat-kit'
import { EndpointForm, ExportMenu, ForkBadge, Paperclip, ReplyEndMark, useFollowNewest } from 'chat-kit/react'
import { colloquyAttachments } from './attachments.js'
import { chatModel } from './model.js'

/** The open chat and how to open another, for the parts of the thread that need them. */
const OpenChat = createContext<{ store: Store; session_id: string | null; open(id: string): void } | null>(
  null,
)
const useOpenChat = (): { store: Store; session_id: string | null; open(id: string): void } =>
  useContext(OpenChat)!

export function App({ store }: { store: Store }): ReactNode {
  const model = useMemo(() => chatModel(store), [store])
  return (
    <ColloquyProvider store={store}>
      <Chat store={store} model={model} />
    </ColloquyProvider>
  )
}

/** The open chat lives in the URL hash, so a reload reopens it. */
function Chat({ store, model }: { store: Store; model: ChatModelAdapter }): ReactNode {
  const [session_id, setSession] = useState<string | null>(() => location.hash.slice(1) || null)
  useEffect(() => {
    history.replaceState(null, '', session_id ? `#${session_id}` : location.pathname)
  }, [session_id])
  // A chat is always open (the last one, or a new one), so files attach to it from the start.
  useEffect(() => {
    if (session_id) return
    void store
      .list({ order: 'updated_desc', limit: 1 })
      .then(async ({ sessions }) => setSession(sessions[0]?.session_id ?? (await createThread(store))))
  }, [store, session_id])
  const current = useRef(session_id)
  current.current = session_id
  const attachments = useMemo(() => colloquyAttachments(store, () => current.current), [store])
  const runtime = useColloquyRuntime({
    session_id,
    onSessionChange: setSession,
    model,
    modelName: LOCAL_MODEL,
    attachments,
  })
  const open = useMemo(() => ({ store, session_id, open: setSession }), [store, session_id])
  return (
    <OpenChat.Provider value={open}>
      <AssistantRuntimeProvider runtime={runtime}>
        <div className="app">
          <aside className="sidebar">
            <ThreadListPrimitive.Root className="threads">
              <ThreadListPrimitive.New className="new">+ New chat</ThreadListPrimitive.New>
              <ThreadListPrimitive.Items components={{ ThreadListItem }} />
            </ThreadListPrimitive.Root>
            <EndpointForm />
          </aside>
          <main className="main">
            {/* The composer shows once the chat it writes to is open. */}
            {session_id && <Thread />}
          </main>
        </div>
      </AssistantRuntimeProvider>
    </OpenChat.Provider>
  )
}

function ThreadListItem(): ReactNode {
  const { store } = useOpenChat()
  const id = useAuiState((s) => s.threadListItem.id)
  const forked = useSession(id).data?.forked_from !== undefined
  const [menu, setMenu] = useState(false)
  const [row, setRow] = useState<HTMLDivElement | null>(null)
  const close = useCallback(() => setMenu(false), [])
  const report = useCallback((message: string) => alert(message), [])
  return (
    <ThreadListItemPrimitive.Root className="thread-item" data-chat ref={setRow}>
      <ThreadListItemPrimitive.Trigger className="thread-trigger thread-title">
        <span className="thread-title">
          <ThreadListItemPrimitive.Title fallback="New chat" />
        </span>
        <ForkBadge forked={forked} />
      </ThreadListItemPrimitive.Trigger>
      <button
        type="button"
        className="icon"
        aria-label="Export chat"
        aria-haspopup="menu"
        aria-expanded={menu}
        onClick={() => setMenu((m) => !m)}
      >
        ⤓
      </button>
      <ThreadListItemPrimitive.Archive className="icon" aria-label="Archive chat">
        ⌫
      </ThreadListItemPrimitive.Archive>
      <ThreadListItemPrimitive.Delete className="icon" aria-label="Delete chat">
        ✕
      </ThreadListItemPrimitive.Delete>
      {menu && <ExportMenu store={store} sessionId={id} within={row} onClose={close} onError={report} />}
    </ThreadListItemPrimitive.Root>
  )
}

function Thread(): ReactNode {
  // chat-kit's one rule for following the newest message, instead of the viewport's own.
  const { scroller, content } = useFollowNewest<HTMLDivElement, HTMLDivElement>()
  return (
    <ThreadPrimitive.Root className="thread">
      <ThreadPrimitive.Viewport
        className="viewport"
        autoScroll={false}
        scrollToBottomOnRunStart={false}
        scrollToBottomOnInitialize={false}
        ref={scroller}
      >
        <div ref={content}>
          <ThreadPrimitive.Empty>
            <p className="empty">
              Ask anything. Replies come from a built-in local model unless an endpoint is set.
            </p>
          </ThreadPrimitive.Empty>
          <ThreadPrimitive.Messages components={{ UserMessage, AssistantMessage, EditComposer }} />
        </div>
      </ThreadPrimitive.Viewport>
      <Composer />
    </ThreadPrimitive.Root>
  )
}

function Composer(): ReactNode {
  const running = useAuiState((s) => s.thread.isRunning)
  const files = useAuiState((s) => s.composer.attachments.length)
  return (
    <ComposerPrimitive.Root className="composer">
      {files > 0 && (
        <ul className="chips" aria-label="Attachments">
          <ComposerPrimitive.Attachments components={{ Attachment: Chip }} />
        </ul>
      )}
      <ComposerPrimitive.AddAttachment
        className="attach"
        aria-label="Attach files"
        title="Attach files"
        multiple
      >
        <Paperclip />
      </ComposerPrimitive.AddAttachment>
      <ComposerPrimitive.Input className="input" placeholder="Message" aria-label="Message" autoFocus />
      {running ? (
        <ComposerPrimitive.Cancel className="button">Stop</ComposerPrimitive.Cancel>
      ) : (
        <ComposerPrimitive.Send className="button primary">Send</ComposerPrimitive.Send>
      )}
    </ComposerPrimitive.Root>
  )
}

/** A file waiting to be sent: its name (and a thumbnail for an image), and a remove button. */
function Chip(): ReactNode {
  const name = useAuiState((s) => s.attachment.name)
  const file = useAuiState((s) => s.attachment.file)
  const [url, setUrl] = useState<string | null>(null)
  useEffect(() => {
    if (!file || !isImageFile(file)) return
    const u = URL.createObjectURL(file)
    setUrl(u)
    return () => URL.revokeObjectURL(u)
  }, [file])
  return (
    <li className="chip">
      {url && <img src={url} alt="" />}
      <span className="chip-name">
        <AttachmentPrimitive.Name />
      </span>
      <AttachmentPrimitive.Remove className="chip-remove" aria-label={`Remove ${name}`}>
        ×
      </AttachmentPrimitive.Remove>
    </li>
  )
}

/** Forks the chat at this message into a new one, and opens it. */
function Fork(): ReactNode {
  const { store, session_id, open } = useOpenChat()
  const id = useAuiState((s) => s.message.id)
  const running = useAuiState((s) => s.thread.isRunning)
  if (!session_id) return null
  return (
    <button
      type="button"
      className="link"
      disabled={running}
      onClick={() => void forkAtMessage(store, session_id, id).then(open, (e: unknown) => alert(String(e)))}
    >
      Fork
    </button>
  )
}

function BranchPicker(): ReactNode {
  return (
    <BranchPickerPrimitive.Root hideWhenSingleBranch className="picker" data-picker>
      <BranchPickerPrimitive.Previous aria-label="Previous version">‹</BranchPickerPrimitive.Previous>
      <BranchPickerPrimitive.Number /> / <BranchPickerPrimitive.Count />
      <BranchPickerPrimitive.Next aria-label="Next version">›</BranchPickerPrimitive.Next>
    </BranchPickerPrimitive.Root>
  )
}

function UserMessage(): ReactNode {
  return (
    <MessagePrimitive.Root className="message user" data-role="user">
      <div className="bubble">
        <MessagePrimitive.Parts components={{ Image, File }} />
      </div>
      <div className="meta">
        <ActionBarPrimitive.Root className="actions">
          <ActionBarPrimitive.Edit className="link">Edit</ActionBarPrimitive.Edit>
        </ActionBarPrimitive.Root>
        <Fork />
        <BranchPicker />
      </div>
    </MessagePrimitive.Root>
  )
}

function AssistantMessage(): ReactNode {
  return (
    <MessagePrimitive.Root className="message assistant" data-role="assistant">
      <div className="bubble">
        <MessagePrimitive.Parts components={{ Reasoning, Image, File, tools: { Fallback: ToolCall } }} />
      </div>
      <div className="meta">
        <ActionBarPrimitive.Root className="actions">
          <ActionBarPrimitive.Reload className="link">Regenerate</ActionBarPrimitive.Reload>
        </ActionBarPrimitive.Root>
        <Fork />
        <BranchPicker />
        <ReplyStatus />
      </div>
    </MessagePrimitive.Root>
  )
}

/** How the reply ended (chat-kit's `replyEnd`, as in every app): from its entry and, when it is the last, the session. */
function ReplyStatus(): ReactNode {
  const { session_id } = useOpenChat()
  const id = useAuiState((s) => s.message.id)
  const last = useAuiState((s) => s.message.isLast)
  const entry = useEntry(session_id ?? '', id).data
  const meta = useSession(session_id ?? '').data
  return <ReplyEndMark end={replyEnd(entry?.kind === 'message' ? entry.message : null, meta, last)} />
}

function EditComposer(): ReactNode {
  return (
    <ComposerPrimitive.Root className="composer edit">
      <ComposerPrimitive.Input className="input" aria-label="Edit message" />
      <ComposerPrimitive.Cancel className="button">Cancel</ComposerPrimitive.Cancel>
      <ComposerPrimitive.Send className="button primary">Save & send</ComposerPrimitive.Send>
    </ComposerPrimitive.Root>
  )
}

function Reasoning({ text }: { text: string }): ReactNode {
  return (
    <details className="reasoning" data-block="thinking">
      <summary>Thinking</summary>
      {text}
    </details>
  )
}

function Image({ image }: { image: string }): ReactNode {
  return <img className="picture" src={image} alt="" data-block="image" />
}

function File({ filename, mimeType }: { filename?: string; mimeType: string }): ReactNode {
  return (
    <span className="file" data-block="file">
      {filename ?? mimeType}
    </span>
  )
}

function ToolCall({ toolName, argsText, result, isError }: ToolCallMessagePartProps): ReactNode {
  return (
    <div className={isError ? 'tool error' : 'tool'} data-block="function_call">
      <code>{toolName}</code> <span className="args">{argsText}</span>
      {result !== undefined && (
        <div className="result" data-block="function_result">
          → {typeof result === 'string' ? result : JSON.stringify(result)}
        </div>
      )}
    </div>
  )
}
