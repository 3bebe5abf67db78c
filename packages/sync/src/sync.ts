import type { Observable } from 'rxjs'
import type { Store } from '@colloquy/core'
import { searchWithServer, type SyncSearchOptions, type SyncSearchResult } from './search.js'
import { acknowledge, rejections } from './conflicts.js'
import { lead } from './leader.js'
import { leadLoop } from './loop.js'
import { outboxHook } from './outbox.js'
import { closeStream, outbox, refreshPending, replication, setStatus, wake } from './state.js'
import type { Conflict, IntegrityFailure, Rejection, SyncOptions, SyncStatus } from './types.js'

export interface Sync {
  start(): void
  stop(): void
  /** Resolves when the outbox is empty and the store has pulled up to the server's head. */
  flush(): Promise<void>
  readonly status$: Observable<SyncStatus>
  readonly conflicts$: Observable<Conflict>
  readonly rejected$: Observable<Rejection>
  /**
   * With a `keyring`: server changes refused because they do not open (tampered, swapped,
   * replayed). Nothing of such a change is applied, and syncing goes on with the rest.
   */
  readonly integrity$: Observable<IntegrityFailure>
  /** Rejected changes still stored, oldest first. */
  rejections(): Promise<Rejection[]>
  /** Forgets a rejected change once the app has dealt with it. */
  acknowledge(id: number): Promise<void>
  /**
   * Searches the server for the caller's sessions this device does not hold, and merges its hits
   * with the device's own (`options.local`, an `enableSearch(store)`): see `searchWithServer`.
   */
  search(request: unknown, options?: SyncSearchOptions): Promise<SyncSearchResult>
  /** Stops, and stops recording local changes for push (they are then never sent). */
  close(): void
}

/**
 * Replicates a store with a Colloquy server. Every tab records its local commits in the outbox
 * (same transaction as the commit); one tab per database, the leader, pushes the outbox
 * (`push.ts`), pulls from its checkpoint (`pull.ts`) and then follows the live stream
 * (`stream.ts`), starting over on a reset (`resync.ts`), in one loop (`loop.ts`) around one
 * state (`state.ts`). Remote changes go through the store's replica rules, so they fire the same
 * events and live-query updates as local ones.
 */
export function createSync(store: Store, options: SyncOptions): Sync {
  const s = replication(store, options)
  const removeHook = store.addCommitHook(outboxHook(s.now))
  // Attachments pulled from the server arrive as metadata; their bytes are fetched on first read.
  const download = s.transport.downloadAttachment?.bind(s.transport)
  const removeSource = download
    ? store.setAttachmentSource((session_id, attachment_id) => download(session_id, attachment_id))
    : () => {}
  const { channel, status } = s
  if (channel)
    channel.onmessage = (ev: MessageEvent<SyncStatus>) =>
      void (!s.leader && status.next({ ...ev.data, leader: false }))

  // Both directions wake the loop: online to retry at once, offline to pause and say so.
  const onOnline = (): void => wake(s)
  if (typeof addEventListener === 'function') {
    addEventListener('online', onOnline)
    addEventListener('offline', onOnline)
  }

  // Local commits (this tab's or, through the relay, another tab's) mean new outbox records.
  const commitsSub = store.commits$.subscribe((c) => {
    if (c.source === 'remote') return
    if (!s.leader) void refreshPending(s)
    else if (s.backingOff) s.dirty = true
    else wake(s)
  })

  let stopLeading: (() => void) | undefined
  // A restarted sync waits for the previous loop to wind down: one loop at a time owns the
  // checkpoint and the in-flight set.
  let lastLoop: Promise<void> = Promise.resolve()

  void refreshPending(s)
  const sync: Sync = {
    start() {
      if (stopLeading) return
      stopLeading = lead(`colloquy-sync:${store.storage.name}`, (signal) => {
        const previous = lastLoop
        const loop = previous.then(() => leadLoop(s, signal))
        lastLoop = loop.catch(() => {})
        return loop
      })
    },
    stop() {
      stopLeading?.()
      stopLeading = undefined
      closeStream(s)
      if (s.leader) setStatus(s, { state: 'offline' })
    },
    async flush() {
      if (!stopLeading) throw new Error('sync is not started')
      for (;;) {
        if (s.leader) {
          const done = new Promise<void>((r) => s.flushWaiters.push(r))
          wake(s)
          await done
          await s.applying
          await Promise.all(s.fetching)
          if (!(await outbox(s)).length && s.checkpoint >= s.head) return
        } else {
          // Another tab replicates: wait until it has pushed everything.
          if (!(await outbox(s)).length && status.value.state === 'idle') return
          await new Promise((r) => setTimeout(r, 50))
        }
      }
    },
    status$: status.asObservable(),
    conflicts$: s.conflicts.asObservable(),
    rejected$: s.rejected.asObservable(),
    integrity$: s.integrity.asObservable(),
    rejections: () => rejections(s),
    acknowledge: (id) => acknowledge(s, id),
    search: (request, options) => searchWithServer(store, s.transport, request, options),
    close() {
      sync.stop()
      removeHook()
      removeSource()
      commitsSub.unsubscribe()
      channel?.close()
      if (typeof removeEventListener === 'function') {
        removeEventListener('online', onOnline)
        removeEventListener('offline', onOnline)
      }
    },
  }
  return sync
}
