import { useSyncStatus, type SyncStatus } from '@colloquy/react'
import { useSyncExternalStore, type ReactNode } from 'react'

const onOnlineChange = (cb: () => void): (() => void) => {
  window.addEventListener('online', cb)
  window.addEventListener('offline', cb)
  return () => {
    window.removeEventListener('online', cb)
    window.removeEventListener('offline', cb)
  }
}
const useOnline = (): boolean =>
  useSyncExternalStore(
    onOnlineChange,
    () => navigator.onLine,
    () => true,
  )

const syncLabels: Record<SyncStatus['state'], [label: string, tone: string]> = {
  offline: ['Offline', 'muted'],
  connecting: ['Connecting…', 'busy'],
  syncing: ['Syncing…', 'busy'],
  idle: ['Synced', 'good'],
  error: ['Sync error', 'bad'],
}

/** Where the data stands: synced with a server (when sync runs), or kept in this browser only. */
export function SyncBadge({ configured, onClick }: { configured: boolean; onClick(): void }): ReactNode {
  const status = useSyncStatus()
  const online = useOnline()
  let label: string
  let tone: string
  let detail: string
  if (status.status === 'ready' && status.data) {
    const s = status.data
    ;[label, tone] = syncLabels[s.state]
    if (s.pending > 0) label += ` · ${s.pending} pending`
    detail =
      s.error ??
      (s.last_synced_at ? `Last synced ${new Date(s.last_synced_at).toLocaleTimeString()}` : 'Not synced yet')
  } else {
    label = online ? 'Local only' : 'Offline'
    tone = online ? 'local' : 'muted'
    detail = configured
      ? 'Saved in this browser. A server is set, but this build has no sync yet.'
      : 'Saved in this browser. Set a server in Settings to sync.'
  }
  return (
    <button
      type="button"
      className={`sync-badge tone-${tone}`}
      title={detail}
      aria-label={`Sync: ${label}. ${detail}`}
      onClick={onClick}
    >
      <span className="dot" aria-hidden="true" />
      <span role="status">{label}</span>
    </button>
  )
}
