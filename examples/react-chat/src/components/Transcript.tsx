import { useMessageIds } from '@colloquy/react'
import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react'
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

/**
 * Rows rendered at first, from the newest: an imported session can have thousands of messages,
 * and rendering them all at once would freeze the page for seconds.
 */
const PAGE = 200

export function Transcript({ sessionId, busy, onFork, empty }: Props): ReactNode {
  const ids = useMessageIds({ session_id: sessionId })
  const { scroller, content } = useStickToBottom()
  const [shown, setShown] = useState(PAGE)
  const all = ids.status === 'ready' ? ids.data : []
  const hidden = Math.max(0, all.length - shown)
  const list = hidden ? all.slice(hidden) : all
  return (
    <div className="transcript" ref={scroller}>
      {ids.status === 'error' && <p className="error pad">Could not read this chat: {String(ids.error)}</p>}
      {ids.status === 'ready' && all.length === 0 && empty}
      {hidden > 0 && (
        <button type="button" className="earlier" onClick={() => setShown((n) => n + PAGE)}>
          Show {Math.min(PAGE, hidden).toLocaleString()} earlier messages ({hidden.toLocaleString()} not shown)
        </button>
      )}
      <ol className="messages" ref={content} aria-label="Messages" aria-busy={busy}>
        {list.map((id, i) => (
          <MessageRow key={id} sessionId={sessionId} entryId={id} live={busy && i === list.length - 1} busy={busy} onFork={onFork} />
        ))}
      </ol>
    </div>
  )
}
