import type { AttachmentMeta } from '@colloquy/core'
import { useSession } from '@colloquy/react'
import type { ReactNode } from 'react'
import { useChat } from '../data/chat-context.js'
import { Composer } from './Composer.js'
import { Transcript, type Target } from './Transcript.js'
import { Welcome } from './Welcome.js'

/** The open chat (or the welcome screen when none is open): transcript above, composer below. */
export function ChatView({
  sessionId,
  onOpen,
  target,
}: {
  sessionId: string | null
  onOpen(id: string | null): void
  /** The message to open the chat at (a search hit), highlighted. */
  target?: Target | null
}): ReactNode {
  const { chat, run, report } = useChat()
  const session = useSession(sessionId ?? '')
  const busy = sessionId !== null && session.status === 'ready' && session.data?.status === 'working'

  // Sending (or attaching a file) with no chat open starts one.
  const ensure = async (): Promise<string | null> => {
    if (sessionId) return sessionId
    const id = (await run(chat.create())) ?? null
    if (id) onOpen(id)
    return id
  }
  const send = async (text: string, attachments: readonly AttachmentMeta[] = []): Promise<void> => {
    const id = await ensure()
    if (id) await run(chat.send(id, text, attachments))
  }
  const fork = async (entryId: string): Promise<void> => {
    const id = sessionId && (await run(chat.fork(sessionId, entryId)))
    if (id) onOpen(id)
  }
  const welcome = <Welcome onPick={(prompt) => void send(prompt)} />

  if (sessionId && session.status === 'ready' && session.data === null) {
    return (
      <div className="gone">
        <p>This chat does not exist (any more).</p>
        <button type="button" className="primary" onClick={() => onOpen(null)}>
          Start a new one
        </button>
      </div>
    )
  }
  return (
    <>
      {sessionId ? (
        <Transcript
          sessionId={sessionId}
          busy={busy}
          onFork={(e) => void fork(e)}
          empty={welcome}
          target={target}
        />
      ) : (
        <div className="transcript">{welcome}</div>
      )}
      <Composer
        sessionId={sessionId}
        busy={busy}
        ensureSession={ensure}
        onSend={(text, files) => void send(text, files)}
        onStop={() => sessionId && chat.stop(sessionId)}
        onError={report}
      />
    </>
  )
}
