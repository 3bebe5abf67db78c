import type { SearchHit } from '@colloquy/core/search'
import { useStore } from '@colloquy/react'
import { isSearchKey } from 'chat-kit'
import {
  lazy,
  Suspense,
  useCallback,
  useEffect,
  type Dispatch,
  type ReactNode,
  type SetStateAction,
} from 'react'
import { useChat } from '../data/chat-context.js'

// The palette and the search entry it imports are a chunk of their own, fetched on the first
// Ctrl/Cmd+K: the start bundle holds only this listener.
const SearchPalette = lazy(() => import('./SearchPalette.js').then((m) => ({ default: m.SearchPalette })))

/**
 * The search palette while `open`; Ctrl/Cmd+K opens and closes it. A picked hit opens its chat
 * at its message.
 */
export function SearchLauncher({
  open,
  setOpen,
  onOpenAt,
}: {
  open: boolean
  setOpen: Dispatch<SetStateAction<boolean>>
  onOpenAt(session_id: string, entry_id: string | null): void
}): ReactNode {
  const store = useStore()
  const { run } = useChat()
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (isSearchKey(e)) {
        e.preventDefault() // the browser's own Ctrl+K (search the web)
        setOpen((v) => !v)
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [setOpen])
  const close = useCallback(() => setOpen(false), [setOpen])
  const pick = useCallback(
    async (hit: SearchHit) => {
      setOpen(false)
      // Off the active path: switch to the hit's branch first, so the chat opens on it.
      if (store && hit.entry_id && !hit.on_active_path)
        await run(store.selectBranch({ session_id: hit.session_id, entry_id: hit.entry_id }))
      onOpenAt(hit.session_id, hit.entry_id)
    },
    [store, run, onOpenAt, setOpen],
  )
  if (!open) return null
  return (
    <Suspense fallback={null}>
      <SearchPalette onPick={(hit) => void pick(hit)} onClose={close} />
    </Suspense>
  )
}
