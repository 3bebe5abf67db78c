import type { Observable } from 'rxjs'
import type { Store } from '@colloquy/core'
import { searchWithServer, type SyncSearchOptions, type SyncSearchResult } from './search.js'
import { acknowledge, rejections } from './conflicts.js'
import { lead, leadersTakeTurns } from './leader.js'
import { leadLoop } from './loop.js'
import { outboxHook } from './outbox.js'
import { closeStream, outbox, refreshPending, replication, setStatus, wake } from './state.js'
import { tabMessageOf, tell } from './tab-channel.js'
import type { Conflict, IntegrityFailure, Rejection, SyncOptions, SyncStatus } from './types.js'

/** How long a tab that does not lead waits for the leader's answer to a flush before asking again. */
const ASK_AGAIN_MS = 1_000

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

  /**
   * One round of the leader's flush: true once the outbox is empty and the store has pulled up
   * to the server's head (a round that ends short of it is followed by another).
   */
  const flushRound = async (): Promise<boolean> => {
    const done = new Promise<void>((r) => s.flushWaiters.push(r))
    wake(s)
    await done
    await s.applying
    await Promise.all(s.fetching)
    return !(await outbox(s)).length && s.checkpoint >= s.head
  }
  /** Flush requests of other tabs this leader is working on (a repeated request joins its own). */
  const answering = new Set<string>()
  const answerFlush = (id: string): void => {
    if (answering.has(id)) return
    answering.add(id)
    void (async () => {
      while (s.leader && !(await flushRound()));
      // Stepped down meanwhile: the asking tab asks the next leader.
      if (s.leader) tell(channel, { kind: 'flushed', id })
    })()
      .catch(() => {})
      .finally(() => answering.delete(id))
  }
  /** This tab's flush requests waiting for the leader's answer. */
  const answers = new Map<string, () => void>()
  let asked = 0
  if (channel)
    channel.onmessage = (ev: MessageEvent<unknown>) => {
      const m = tabMessageOf(ev.data)
      if (!m) return
      if (m.kind === 'status') {
        if (!s.leader) status.next(m.status)
      } else if (m.kind === 'flushed') answers.get(m.id)?.()
      else if (s.leader) {
        if (m.kind === 'ask') tell(channel, { kind: 'status', status: status.value })
        else answerFlush(m.id)
      }
    }

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
      // The leader, if another tab is it, says how it stands now (it tells its changes anyway).
      tell(channel, { kind: 'ask' })
    },
    stop() {
      stopLeading?.()
      stopLeading = undefined
      closeStream(s)
      if (s.leader) setStatus(s, { state: 'offline' })
    },
    async flush() {
      if (!stopLeading) throw new Error('sync is not started')
      // Another tab replicates (or none does yet: this one may be about to): the leader is
      // asked, again every ASK_AGAIN_MS under the same id until it answers, so a leader that
      // closed before answering is replaced by the next, and this tab leading meanwhile flushes
      // itself.
      const id = `${s.clientId}.${++asked}`
      try {
        for (;;) {
          if (s.leader) {
            if (await flushRound()) return
            continue
          }
          // Without Web Locks every store leads: this one is about to (its loop is starting),
          // and another store's answer would say nothing of this one's outbox.
          if (!leadersTakeTurns()) {
            await new Promise((r) => setTimeout(r, 10))
            continue
          }
          const answered = new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), ASK_AGAIN_MS)
            answers.set(id, () => {
              clearTimeout(timer)
              resolve(true)
            })
          })
          tell(channel, { kind: 'flush', id })
          if (await answered) return
        }
      } finally {
        answers.delete(id)
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
