import type { Store } from '@colloquy/core'
import type { SyncLike } from '@colloquy/react'
import { createSync } from '@colloquy/sync'

/** Where to sync, kept in this browser (localStorage), never in the synced data itself. */
export interface SyncSettings {
  url: string
  token: string
}

const KEY = 'colloquy-demo:sync'

/**
 * The server this build was started with: `npm start` serves the app and the sync server on one
 * origin (the preview proxies the sync routes), so a newcomer's chats sync with no setup.
 * Builds without it (tests, static hosting) start with sync off.
 */
function embeddedDefault(): SyncSettings {
  const mode = import.meta.env.VITE_COLLOQUY_SYNC as string | undefined
  if (mode === 'same-origin' && typeof location !== 'undefined') return { url: location.origin, token: '' }
  return { url: mode && mode !== 'off' ? mode : '', token: '' }
}

export function loadSyncSettings(): SyncSettings {
  try {
    const saved = localStorage.getItem(KEY)
    if (saved === null) return embeddedDefault()
    const parsed = JSON.parse(saved) as Partial<SyncSettings>
    return { url: parsed.url ?? '', token: parsed.token ?? '' }
  } catch {
    return embeddedDefault()
  }
}

export function saveSyncSettings(settings: SyncSettings): void {
  localStorage.setItem(KEY, JSON.stringify(settings))
}

/** A running sync client: what the provider's `sync` takes, and a way to stop it. */
export type SyncClient = SyncLike & { stop(): void }

/** Whether this build can sync at all; the settings panel says so when it cannot. */
export const SYNC_AVAILABLE = true

/** The one place sync is wired: one client per saved settings, none without a server URL. */
export function connectSync(store: Store, settings: SyncSettings): SyncClient | null {
  if (!settings.url) return null
  const sync = createSync(store, { url: settings.url, token: settings.token || undefined })
  sync.start()
  return { status$: sync.status$, stop: () => sync.close() }
}
