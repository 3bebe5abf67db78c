import type { Store } from '@colloquy/core'
import type { SyncLike } from '@colloquy/react'

/** Where to sync, kept in this browser (localStorage), never in the synced data itself. */
export interface SyncSettings {
  url: string
  token: string
}

const KEY = 'colloquy-demo:sync'

export function loadSyncSettings(): SyncSettings {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? '{}') as Partial<SyncSettings>
    return { url: saved.url ?? '', token: saved.token ?? '' }
  } catch {
    return { url: '', token: '' }
  }
}

export function saveSyncSettings(settings: SyncSettings): void {
  localStorage.setItem(KEY, JSON.stringify(settings))
}

/** A running sync client: what the provider's `sync` takes, and a way to stop it. */
export type SyncClient = SyncLike & { stop(): void }

/** Whether this build can sync at all; the settings panel says so when it cannot. */
export const SYNC_AVAILABLE = false

/**
 * The one place sync is wired. `@colloquy/sync` is not in the workspace yet; once it is, this
 * becomes: `if (!settings.url) return null; const sync = createSync(store, settings); sync.start();
 * return sync`. Everything else (badge, settings, provider) already takes what this returns.
 */
export function connectSync(_store: Store, _settings: SyncSettings): SyncClient | null {
  return null
}
