import { useEffect, useMemo, useState, type ReactNode } from 'react'
import type { Store } from '@colloquy/core'
import { ColloquyProvider } from '@colloquy/react'
import { useColloquyRuntime } from '@colloquy/assistant-ui'
import {
  ActionBarPrimitive, AssistantRuntimeProvider, BranchPickerPrimitive, ComposerPrimitive, MessagePrimitive,
  ThreadListItemPrimitive, ThreadListPrimitive, ThreadPrimitive, useAuiState,
  type ChatModelAdapter, type ToolCallMessagePartProps,
} from '@assistant-ui/react'
import { LOCAL_MODEL } from 'chat-kit'
import { chatModel } from './model.js'
import { EndpointForm } from 'chat-kit/endpoint-form'

export function App({ store }: { store: Store }): ReactNode {
  const model = useMemo(() => chatModel(store), [store])
  return (
    <ColloquyProvider store={store}>
      <Chat model={model} />
    </ColloquyProvider>
  )
}

/** The open chat lives in the URL hash, so a reload reopens it. */
function Chat({ model }: { model: ChatModelAdapter }): ReactNode {
  const [session_id, setSession] = useState<string | null>(() => location.hash.slice(1) || null)
  useEffect(() => {
    history.replaceState(null, '', session_id ? `#${session_id}` : location.pathname)
  }, [session_id])
  const runtime = useColloquyRuntime({ session_id, onSessionChange: setSession, model, modelName: LOCAL_MODEL })
  return (
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
          <Thread />
        </main>
      </div>
    </AssistantRuntimeProvider>
  )
}

function ThreadListItem(): ReactNode {
  return (
    <ThreadListItemPrimitive.Root className="thread-item" data-chat>
      <ThreadListItemPrimitive.Trigger className="thread-title">
        <ThreadListItemPrimitive.Title fallback="New chat" />
      </ThreadListItemPrimitive.Trigger>
      <ThreadListItemPrimitive.Archive className="icon" aria-label="Archive chat">⌫</ThreadListItemPrimitive.Archive>
      <ThreadListItemPrimitive.Delete className="icon" aria-label="Delete chat">✕</ThreadListItemPrimitive.Delete>
    </ThreadListItemPrimitive.Root>
  )
}

function Thread(): ReactNode {
  return (
    <ThreadPrimitive.Root className="thread">
      <ThreadPrimitive.Viewport className="viewport">
        <ThreadPrimitive.Empty>
          <p className="empty">Ask anything. Replies come from a built-in local model unless an endpoint is set.</p>
        </ThreadPrimitive.Empty>
        <ThreadPrimitive.Messages components={{ UserMessage, AssistantMessage, EditComposer }} />
      </ThreadPrimitive.Viewport>
      <Composer />
    </ThreadPrimitive.Root>
  )
}

function Composer(): ReactNode {
  const running = useAuiState((s) => s.thread.isRunning)
  return (
    <ComposerPrimitive.Root className="composer">
      <ComposerPrimitive.Input className="input" placeholder="Message" aria-label="Message" autoFocus />
      {running
        ? <ComposerPrimitive.Cancel className="button">Stop</ComposerPrimitive.Cancel>
        : <ComposerPrimitive.Send className="button primary">Send</ComposerPrimitive.Send>}
    </ComposerPrimitive.Root>
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
      <div className="bubble"><MessagePrimitive.Parts components={{ Image, File }} /></div>
      <div className="meta">
        <ActionBarPrimitive.Root className="actions">
          <ActionBarPrimitive.Edit className="link">Edit</ActionBarPrimitive.Edit>
        </ActionBarPrimitive.Root>
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
        <BranchPicker />
        <ReplyStatus />
      </div>
    </MessagePrimitive.Root>
  )
}

/** "Stopped" or "Interrupted", from the reply's status (the same in every tab). */
function ReplyStatus(): ReactNode {
  const status = useAuiState((s) => (s.message.status?.type === 'incomplete' ? s.message.status.reason : null))
  if (status === 'cancelled') return <span className="status" data-status="stopped">Stopped</span>
  if (status) return <span className="status" data-status="interrupted">Interrupted</span>
  return null
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
  return <details className="reasoning" data-block="thinking"><summary>Thinking</summary>{text}</details>
}

function Image({ image }: { image: string }): ReactNode {
  return <img className="picture" src={image} alt="" data-block="image" />
}

function File({ filename, mimeType }: { filename?: string; mimeType: string }): ReactNode {
  return <span className="file" data-block="file">{filename ?? mimeType}</span>
}

function ToolCall({ toolName, argsText, result, isError }: ToolCallMessagePartProps): ReactNode {
  return (
    <div className={isError ? 'tool error' : 'tool'} data-block="function_call">
      <code>{toolName}</code> <span className="args">{argsText}</span>
      {result !== undefined && <div className="result" data-block="function_result">→ {typeof result === 'string' ? result : JSON.stringify(result)}</div>}
    </div>
  )
}
