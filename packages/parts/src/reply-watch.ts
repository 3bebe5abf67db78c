import type { SessionStatus, Store, WriteSet } from '@colloquy/core'
import { INTERRUPTED_REASON, replyLock } from './reply-lock.js'

const locks = (): LockManager | undefined => (typeof navigator !== 'undefined' ? navigator.locks : undefined)

const NOTHING: WriteSet = { deleted: new Set(), heads: new Map(), entries: new Map(), side: [] }

/**
 * The session's status as stored now. Read from storage, not from this tab's memory: the writer
 * tab's last status may still be on its way over the relay when its reply lock is let go, and a
 * reply that ended `done` must never be marked interrupted.
 */
async function storedHead(store: Store, session_id: string): Promise<{ status: SessionStatus; leaf: string | null } | undefined> {
  let head: { status: SessionStatus; leaf: string | null } | undefined
  await store.storage.transact(async (reader) => {
    const h = await reader.head(session_id)
    head = h && { status: h.meta.status, leaf: h.leaf }
    return NOTHING
  })
  return head
}

/**
 * Records the interruption on the reply itself (the session's leaf: the reply entry, which a
 * writer appends last and a closed writer never follows with its sidecar), so the message keeps
 * its mark after the session's next reply. A leaf that is not an unfinished reply is left alone.
 */
async function markReply(store: Store, session_id: string, leaf: string | null): Promise<void> {
  if (leaf === null) return
  const entry = (await store.getMessage({ session_id, entry_id: leaf }))?.entry
  if (entry?.kind !== 'message' || entry.message.role !== 'assistant' || entry.message.stop_reason !== 'end') return
  await store.updateMessage({
    session_id, entry_id: leaf, content: entry.message.content, stop_reason: 'error', error_message: INTERRUPTED_REASON,
    // Written only if nothing changed it since it was read.
    expected_revision: entry.revision,
  })
}

/**
 * Marks the session's reply interrupted if it is still `working`. Runs only while this tab holds
 * the session's reply lock: a writer sets `working` only while holding it, so `working` seen here
 * is a reply nobody writes any more; and of several tabs waiting on the lock, the first marks and
 * the others find `error`. That makes the mark happen once, whichever tabs race for it.
 */
export async function markIfOrphaned(store: Store, session_id: string): Promise<boolean> {
  // Memory first: a tab that saw no `working` has nothing to do (the relay brings a later one).
  if (store.closed || (await store.get({ session_id }))?.meta.status !== 'working') return false
  const head = await storedHead(store, session_id)
  if (head?.status !== 'working') return false
  await markReply(store, session_id, head.leaf)
  await store.setStatus({ session_id, status: 'error', reason: INTERRUPTED_REASON })
  return true
}

/** Sessions this tab waits on, per store: one lock request per session, however many ask. */
const waiting = new WeakMap<Store, Map<string, Promise<boolean>>>()
/** Aborts the requests of a store whose last watcher stopped. */
const cancels = new WeakMap<Store, AbortController>()

const cancelled = (e: unknown): boolean => e instanceof DOMException && e.name === 'AbortError'

/**
 * Waits until nobody writes a reply into `session_id` (its reply lock free: at once when no tab
 * holds it, else when the writer lets go, by finishing or by its tab closing), then marks the
 * reply interrupted if it was left `working`. Resolves true when this call marked it.
 */
export function awaitReplyEnd(store: Store, session_id: string): Promise<boolean> {
  const lockManager = locks()
  if (!lockManager) return Promise.resolve(false)
  let mine = waiting.get(store)
  if (!mine) waiting.set(store, (mine = new Map()))
  const known = mine.get(session_id)
  if (known) return known
  let cancel = cancels.get(store)
  if (!cancel || cancel.signal.aborted) cancels.set(store, (cancel = new AbortController()))
  const ended = lockManager.request(replyLock(session_id), { signal: cancel.signal }, async () => {
    // Forgotten before the check: a `working` that arrives after it is another reply to wait for.
    mine.delete(session_id)
    return markIfOrphaned(store, session_id).catch(() => false)
  }).catch((e: unknown) => {
    mine.delete(session_id)
    if (cancelled(e)) return false
    throw e
  }) as Promise<boolean>
  mine.set(session_id, ended)
  return ended
}

const watchers = new WeakMap<Store, { count: number; stop: () => void }>()

/**
 * Watches the replies other tabs of this browser write into `store`, and marks one interrupted
 * as soon as its writer's reply lock is let go with the session still `working` (the tab closed,
 * crashed or navigated away mid-reply): every tab on the store then shows it ended, at once.
 * Sessions already `working` when the watch starts are waited on too (or marked at once when no
 * tab holds their lock: the reply of a tab closed earlier, or, indistinguishably, another
 * device's). A `working` status that arrives from a sync server while watching is another
 * device's reply, which no lock here can tell about: it is left alone. Shared per store (the
 * bindings all call it); returns a function that stops this watch.
 */
export function watchReplies(store: Store): () => void {
  const existing = watchers.get(store)
  let done = false
  const unwatch = (): void => {
    if (done) return
    done = true
    const w = watchers.get(store)
    if (w && --w.count === 0) {
      w.stop()
      watchers.delete(store)
    }
  }
  if (existing) {
    existing.count++
    return unwatch
  }
  if (!locks()) {
    watchers.set(store, { count: 1, stop: () => {} })
    return unwatch
  }
  const wait = (session_id: string): void => void awaitReplyEnd(store, session_id).catch(() => {})
  const sub = store.commits$.subscribe((commit) => {
    if (commit.source !== 'tab') return
    for (const e of commit.events) {
      if (e.trigger_type === 'session::status-changed' && (e.payload as { status: SessionStatus }).status === 'working') {
        wait((e.payload as { session_id: string }).session_id)
      }
    }
  })
  void store.list({ status: 'working', limit: 500 }).then(({ sessions }) => {
    if (!done) for (const s of sessions) wait(s.session_id)
  }, () => {})
  watchers.set(store, {
    count: 1,
    stop: () => {
      sub.unsubscribe()
      cancels.get(store)?.abort()
      cancels.delete(store)
    },
  })
  return unwatch
}
