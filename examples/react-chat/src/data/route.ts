import { useCallback, useSyncExternalStore } from 'react'

// The open chat lives in the URL hash (#/c/<id>): reload keeps it, and each tab has its own.
const PREFIX = '#/c/'

const current = (): string | null =>
  location.hash.startsWith(PREFIX) ? decodeURIComponent(location.hash.slice(PREFIX.length)) || null : null

const subscribe = (onChange: () => void): (() => void) => {
  window.addEventListener('hashchange', onChange)
  return () => window.removeEventListener('hashchange', onChange)
}

export function useOpenSession(): [string | null, (session_id: string | null) => void] {
  const id = useSyncExternalStore(subscribe, current, () => null)
  const open = useCallback((session_id: string | null) => {
    location.hash = session_id ? `${PREFIX}${encodeURIComponent(session_id)}` : ''
  }, [])
  return [id, open]
}
