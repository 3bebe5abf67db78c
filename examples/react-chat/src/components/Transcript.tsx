import type { TailItem } from '@colloquy/core'
import { useMessageIds, useStore } from '@colloquy/react'
import { useFollowNewest } from 'chat-kit/react'
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import { MessageRow } from './MessageRow.js'

interface Props {
  sessionId: string
  busy: boolean
  onFork(entryId: string): void
  empty: ReactNode
  /** Open at this message (a search hit): its page is read and its run expanded until it shows. */
  target?: Target | null
}

/** A message to show; `at` tells one pick from the next pick of the same message. */
export interface Target {
  entry_id: string
  at: number
}

/**
 * Blocks read per page, from the newest (`messagesTail`, without bookkeeping entries: the rows
 * are `useMessageIds`, which leaves them out too): a tool run is one block, so a session
 * with 300-call agent runs opens on its last exchanges with the runs collapsed, and an imported
 * session of thousands of messages never renders them all at once.
 */
const PAGE = 200

/** What has been read of the path so far: from `oldest` on, with the entries a run collapsed. */
interface Loaded {
  oldest: string | undefined
  hasMore: boolean
  elided: ReadonlySet<string>
}

const elidedOf = (items: readonly TailItem[]): string[] =>
  items.filter((i) => i.elided).map((i) => i.entry_id)

type Row = { kind: 'entry'; id: string } | { kind: 'run'; ids: string[] }

/** The rows' ids until they are read: one array, so the rows are not worked out again each render. */
const NO_IDS: readonly string[] = []

export function Transcript({ sessionId, busy, onFork, empty, target }: Props): ReactNode {
  const store = useStore()
  const ids = useMessageIds({ session_id: sessionId })
  const { scroller, content } = useFollowNewest<HTMLDivElement, HTMLOListElement>()
  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set())
  const [error, setError] = useState<string | null>(null)
  const loading = useRef(false)
  const all = ids.status === 'ready' ? ids.data : NO_IDS

  // The newest page, again whenever what was read is no longer on the path (a branch switch).
  const stale = loaded?.oldest !== undefined && ids.status === 'ready' && !all.includes(loaded.oldest)
  useEffect(() => {
    if (!store || (loaded && !stale)) return
    let live = true
    store
      .messagesTail({ session_id: sessionId, limit: PAGE, include_custom: false, include_image_data: false })
      .then(
        (page) =>
          live &&
          setLoaded({
            oldest: page.oldest_entry_id,
            hasMore: page.has_more,
            elided: new Set(elidedOf(page.messages)),
          }),
        (e: unknown) => live && setError(String(e)),
      )
    return () => void (live = false)
  }, [store, sessionId, loaded, stale])

  const earlier = useCallback(async (): Promise<void> => {
    if (!store || !loaded?.hasMore || loading.current) return
    loading.current = true
    try {
      const page = await store.messagesTail({
        session_id: sessionId,
        limit: PAGE,
        before_entry_id: loaded.oldest,
        include_custom: false,
        include_image_data: false,
      })
      setLoaded(
        (prev) =>
          prev && {
            oldest: page.oldest_entry_id ?? prev.oldest,
            hasMore: page.has_more,
            elided: new Set([...prev.elided, ...elidedOf(page.messages)]),
          },
      )
    } catch (e) {
      // The path moved under the reader (stale anchor): read the newest page again.
      setLoaded(null)
      setError(null)
      void e
    } finally {
      loading.current = false
    }
  }, [store, sessionId, loaded])

  // Paging back as the reader scrolls up: once they have scrolled away from the bottom, the
  // "earlier" button loads itself when it comes into view.
  const sentinel = useRef<HTMLButtonElement>(null)
  const [reading, setReading] = useState(false)
  useEffect(() => {
    const el = scroller.current
    if (!el || reading) return
    const onScroll = (): void => {
      if (el.scrollHeight - el.scrollTop - el.clientHeight > 200) setReading(true)
    }
    el.addEventListener('scroll', onScroll, { passive: true })
    return () => el.removeEventListener('scroll', onScroll)
  }, [scroller, reading])
  useEffect(() => {
    const el = sentinel.current
    if (!el || !reading) return
    const io = new IntersectionObserver(
      (entries) => entries.some((e) => e.isIntersecting) && void earlier(),
      { root: scroller.current, rootMargin: '200px' },
    )
    io.observe(el)
    return () => io.disconnect()
  }, [earlier, scroller, loaded?.hasMore, reading])

  const showAll = async (run: string[]): Promise<void> => {
    if (!store) return
    // The whole run, every entry in full: the rows then read each entry live.
    const res = await store.messagesRange({
      session_id: sessionId,
      from_entry_id: run[0],
      to_entry_id: run[run.length - 1],
      limit: 500,
      include_image_data: false,
    })
    setExpanded((prev) => new Set([...prev, ...res.messages.map((m) => m.entry_id)]))
  }

  // Until the newest page is read, nothing is rendered (a long session's rows never all at once).
  const start = !loaded || stale ? all.length : loaded.oldest === undefined ? 0 : all.indexOf(loaded.oldest)
  const hidden = loaded?.hasMore && !stale ? start : 0
  const rows = useMemo(() => {
    const out: Row[] = []
    for (const id of all.slice(start)) {
      const collapsed = loaded?.elided.has(id) && !expanded.has(id)
      const last = out[out.length - 1]
      if (!collapsed) out.push({ kind: 'entry', id })
      else if (last?.kind === 'run') last.ids.push(id)
      else out.push({ kind: 'run', ids: [id] })
    }
    return out
  }, [all, start, loaded, expanded])

  // A target older than what was read pages back until it is; one inside a collapsed run is
  // expanded. Its row then scrolls itself into view (MessageRow's `found`).
  const targetId = target?.entry_id
  const targetAt = targetId === undefined ? -1 : all.indexOf(targetId)
  const targetElided = targetId !== undefined && !!loaded?.elided.has(targetId) && !expanded.has(targetId)
  useEffect(() => {
    if (targetId === undefined || targetAt === -1 || !loaded || stale) return
    if (targetAt < start && loaded.hasMore) void earlier()
    else if (targetElided) setExpanded((prev) => new Set(prev).add(targetId))
  }, [targetId, targetAt, targetElided, start, loaded, stale, earlier])

  return (
    <div className="transcript" ref={scroller}>
      {(ids.status === 'error' || error) && (
        <p className="error pad">Could not read this chat: {String(ids.error ?? error)}</p>
      )}
      {ids.status === 'ready' && all.length === 0 && empty}
      {hidden > 0 && (
        <button type="button" className="earlier" ref={sentinel} onClick={() => void earlier()}>
          Show earlier messages ({hidden.toLocaleString()} not shown)
        </button>
      )}
      <ol className="messages" ref={content} aria-label="Messages" aria-busy={busy}>
        {rows.map((row, i) =>
          row.kind === 'entry' ? (
            <MessageRow
              key={row.id}
              sessionId={sessionId}
              entryId={row.id}
              live={busy && i === rows.length - 1}
              busy={busy}
              last={i === rows.length - 1}
              onFork={onFork}
              found={row.id === targetId ? target?.at : undefined}
            />
          ) : (
            <li key={`run:${row.ids[0]}`} className="run-collapsed" data-entries={row.ids.length}>
              <button type="button" className="link" onClick={() => void showAll(row.ids)}>
                {row.ids.length.toLocaleString()} earlier steps of this run · Show all
              </button>
            </li>
          ),
        )}
      </ol>
    </div>
  )
}
