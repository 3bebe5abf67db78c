import { useMessageIds } from '@colloquy/react'
import { useEffect, useRef, type ReactNode, type RefObject } from 'react'
import { MessageRow } from './MessageRow.js'

interface Props {
  sessionId: string
  busy: boolean
  onFork(entryId: string): void
  empty: ReactNode
}

/** Stays pinned to the bottom while a reply streams in, unless the reader scrolled up. */
function useStickToBottom(): { scroller: RefObject<HTMLDivElement | null>; content: RefObject<HTMLOListElement | null> } {
  const scroller = useRef<HTMLDivElement>(null)
  const content = useRef<HTMLOListElement>(null)
  const stick = useRef(true)
  useEffect(() => {
    const el = scroller.current
    const list = content.current
    if (!el || !list) return
    const onScroll = (): void => void (stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80)
    // Rows re-render on their own as tokens arrive, so watch the list's size rather than renders.
    const observer = new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight
    })
    el.addEventListener('scroll', onScroll, { passive: true })
    observer.observe(list)
    return () => {
      el.removeEventListener('scroll', onScroll)
      observer.disconnect()
    }
  }, [])
  return { scroller, content }
}

export function Transcript({ sessionId, busy, onFork, empty }: Props): ReactNode {
  const ids = useMessageIds({ session_id: sessionId })
  const { scroller, content } = useStickToBottom()
  const list = ids.status === 'ready' ? ids.data : []
  return (
    <div className="transcript" ref={scroller}>
      {ids.status === 'error' && <p className="error pad">Could not read this chat: {String(ids.error)}</p>}
      {ids.status === 'ready' && list.length === 0 && empty}
      <ol className="messages" ref={content} aria-label="Messages" aria-busy={busy}>
        {list.map((id, i) => (
          <MessageRow key={id} sessionId={sessionId} entryId={id} live={busy && i === list.length - 1} busy={busy} onFork={onFork} />
        ))}
      </ol>
    </div>
  )
}
