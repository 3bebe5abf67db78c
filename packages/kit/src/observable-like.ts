/**
 * The part of an observable the bindings use. RxJS observables (what the store returns) fit it,
 * and so does any hand-written source, so this package needs no RxJS of its own.
 */
export interface ObservableLike<T> {
  subscribe(observer: { next: (value: T) => void; error: (error: unknown) => void }): { unsubscribe(): void }
}

/** `sync.status$` of `@colloquy/sync`. */
export interface SyncStatus {
  state: 'offline' | 'connecting' | 'syncing' | 'idle' | 'error'
  pending: number
  last_synced_at?: number
  error?: string
}

/** Anything with a status stream: the sync client, or a stand-in for tests and demos. */
export interface SyncLike {
  readonly status$: ObservableLike<SyncStatus>
}
