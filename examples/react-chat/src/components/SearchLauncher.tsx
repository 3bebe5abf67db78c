import type { SearchHit } from '@colloquy/core/search'
import { useStore } from '@colloquy/react'
import { lazy, Suspense, useCallback, useEffect, useState, type ReactNode } from 'react'
import { useChat } from '../data/chat-context.js'

// The palette and the search entry it imports are a chunk of their own, fetched on the first
// Ctrl/Cmd+K: the start bundle holds only this listener.
const SearchPalette = lazy(() => import('./SearchPalette.js').then((m) => ({ default: m.SearchPalette })))

/** Ctrl/Cmd+K opens (and closes) the search palette; a picked hit opens its chat at its message. */
export function SearchLauncher({
  onOpenAt,
}: {
  onOpenAt(session_id: string, entry_id: string | null): void
}): ReactNode {
  const store = useStore()
  const { run } = useChat()
  const [open, setOpen] = useState(false)
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'k') {
        e.preventDefault() // the browser's own Ctrl+K (search the web)
        setOpen((v) => !v)
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [])
  const close = useCallback(() => setOpen(false), [])
  const pick = useCallback(
    async (hit: SearchHit) => {
      setOpen(false)
      // Off the active path: switch to the hit's branch first, so the chat opens on it.
      if (store && hit.entry_id && !hit.on_active_path)
        await run(store.selectBranch({ session_id: hit.session_id, entry_id: hit.entry_id }))
      onOpenAt(hit.session_id, hit.entry_id)
    },
    [store, run, onOpenAt],
  )
  if (!open) return null
  return (
    <Suspense fallback={null}>
      <SearchPalette onPick={(hit) => void pick(hit)} onClose={close} />
    </Suspense>
  )
}
