import { useSession } from '@colloquy/react'
import type { ReactNode } from 'react'
import { useChat } from '../data/chat-context.js'
import { Composer } from './Composer.js'
import { Transcript } from './Transcript.js'
import { Welcome } from './Welcome.js'

/** The open chat (or the welcome screen when none is open): transcript above, composer below. */
export function ChatView({ sessionId, onOpen }: { sessionId: string | null; onOpen(id: string | null): void }): ReactNode {
  const { chat, run } = useChat()
  const session = useSession(sessionId ?? '')
  const busy = sessionId !== null && session.status === 'ready' && session.data?.status === 'working'

  // Sending with no chat open starts one.
  const send = async (text: string): Promise<void> => {
    let id = sessionId
    if (!id) {
      id = (await run(chat.create())) ?? null
      if (!id) return
      onOpen(id)
    }
    await run(chat.send(id, text))
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
        <button type="button" className="primary" onClick={() => onOpen(null)}>Start a new one</button>
      </div>
    )
  }
  return (
    <>
      {sessionId ? <Transcript sessionId={sessionId} busy={busy} onFork={(e) => void fork(e)} empty={welcome} /> : <div className="transcript">{welcome}</div>}
      <Composer busy={busy} onSend={(text) => void send(text)} onStop={() => sessionId && chat.stop(sessionId)} />
    </>
  )
}
