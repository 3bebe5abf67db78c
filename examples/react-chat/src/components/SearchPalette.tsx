import type { Search, SearchHit, SearchResult } from '@colloquy/core/search'
import { useSearch, useSession, useStore } from '@colloquy/react'
import { groupByChat, ROLE_LABEL, SEARCH_LIMIT, searchOf, searchStatus, snippetParts } from 'chat-kit/search'
import 'chat-kit/search.css'
import { useEffect, useId, useMemo, useState, type ReactNode } from 'react'

interface Props {
  /** A hit was chosen (Enter or a click): open its chat at its message. */
  onPick(hit: SearchHit): void
  onClose(): void
}

/** The snippet's text with its matched words marked; as text only, never as markup. */
function Snippet({ snippet }: { snippet: SearchHit['snippet'] }): ReactNode {
  return (
    <span className="search-snippet">
      {snippetParts(snippet).map((part) =>
        part.marked ? <mark key={part.at}>{part.text}</mark> : part.text,
      )}
    </span>
  )
}

function ChatTitle({ sessionId }: { sessionId: string }): ReactNode {
  const session = useSession(sessionId)
  return session.data?.title || 'Untitled chat'
}

/**
 * Ctrl/Cmd+K: every message of every chat, searched on the device as you type. Loaded on the
 * first Ctrl/Cmd+K (with the search entry), so the app's start bundle carries none of it.
 */
export function SearchPalette({ onPick, onClose }: Props): ReactNode {
  const store = useStore()
  const [search, setSearch] = useState<Search | null>(null)
  const [failed, setFailed] = useState<string | null>(null)
  useEffect(() => {
    if (!store) return
    let live = true
    searchOf(store).then(
      (s) => live && setSearch(s),
      (e: unknown) => live && setFailed(e instanceof Error ? e.message : String(e)),
    )
    return () => void (live = false)
  }, [store])

  const [query, setQuery] = useState('')
  const [active, setActive] = useState(0)
  const state = useSearch(search, query, { limit: SEARCH_LIMIT })
  // While the next answer is on its way, the last one stays: no flicker between keystrokes.
  const [shown, setShown] = useState<SearchResult | null>(null)
  if (state.status === 'ready' && state.data !== shown) setShown(state.data)

  const typed = query.trim() !== ''
  const hits = useMemo(() => (typed && shown ? shown.hits : []), [typed, shown])
  // Grouped by chat, the chats in the order of their best hit; `flat` is the keyboard's order.
  const groups = useMemo(() => groupByChat(hits), [hits])
  const flat = useMemo(() => groups.flatMap(([, group]) => group), [groups])
  const current = Math.min(active, flat.length - 1)

  const listId = useId()
  const optionId = (i: number): string => `${listId}-${i}`
  useEffect(() => {
    if (current >= 0) document.getElementById(`${listId}-${current}`)?.scrollIntoView({ block: 'nearest' })
  }, [current, listId])

  const onKeyDown = (e: React.KeyboardEvent): void => {
    if (e.key === 'Escape') onClose()
    else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault()
      if (flat.length > 0) setActive((current + (e.key === 'ArrowDown' ? 1 : flat.length - 1)) % flat.length)
    } else if (e.key === 'Enter' && current >= 0) {
      e.preventDefault()
      onPick(flat[current])
    }
  }

  const status = searchStatus({
    failed,
    ready: search !== null,
    error: state.status === 'error' ? state.error : undefined,
    typed,
    answered: shown !== null && state.status === 'ready',
    hits: flat.length,
    incomplete: shown?.incomplete ?? false,
  })

  let index = 0
  return (
    <div className="overlay search-overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div role="dialog" aria-modal="true" aria-label="Search chats" className="dialog search-palette">
        <input
          type="search"
          role="combobox"
          aria-label="Search chats"
          aria-expanded={flat.length > 0}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={current >= 0 ? optionId(current) : undefined}
          placeholder="Search every chat…"
          autoFocus
          value={query}
          onChange={(e) => {
            setQuery(e.target.value)
            setActive(0)
          }}
          onKeyDown={onKeyDown}
        />
        {status && (
          <p className="search-status muted" role="status">
            {status}
          </p>
        )}
        <div id={listId} role="listbox" aria-label="Matches" className="search-results">
          {groups.map(([sessionId, group]) => (
            <div
              key={sessionId}
              role="group"
              aria-labelledby={`${listId}-${sessionId}`}
              className="search-group"
            >
              <div id={`${listId}-${sessionId}`} className="search-chat" role="presentation">
                <ChatTitle sessionId={sessionId} />
              </div>
              {group.map((hit) => {
                const i = index++
                return (
                  <div
                    key={hit.entry_id ?? 'title'}
                    id={optionId(i)}
                    role="option"
                    aria-selected={i === current}
                    className="search-hit"
                    data-entry-id={hit.entry_id ?? undefined}
                    // Keeps the focus in the input, so typing goes on after a click.
                    onMouseDown={(e) => e.preventDefault()}
                    onMouseMove={() => i !== current && setActive(i)}
                    onClick={() => onPick(hit)}
                  >
                    <span className="search-role">{ROLE_LABEL[hit.role]}</span>
                    <Snippet snippet={hit.snippet} />
                    {!hit.on_active_path && <span className="search-branch">other branch</span>}
                  </div>
                )
              })}
            </div>
          ))}
        </div>
        <p className="search-keys muted small">↑↓ to move · Enter to open · Esc to close</p>
      </div>
    </div>
  )
}
