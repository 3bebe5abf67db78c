import type {
  AssistantMessage,
  SessionEntry,
  SessionHead,
  SessionStatus,
  Store,
  WriteSet,
} from '@colloquy/core'
import { INTERRUPTED_REASON, replyLock } from './reply-lock.js'
import { disownReply, ownsReply } from './reply-owner.js'

const locks = (): LockManager | undefined => (typeof navigator !== 'undefined' ? navigator.locks : undefined)

const NOTHING: WriteSet = { deleted: new Set(), heads: new Map(), entries: new Map(), side: [] }

/** A session's status, leaf and (when it is a message) leaf entry, as stored now. */
interface Stored {
  status: SessionStatus
  leaf: string | null
  reply?: SessionEntry
}

/**
 * The session as stored now. Read from storage, not from this tab's memory: the writer tab's
 * last commits (its status, its reply's last content) may still be on their way over the relay
 * when its reply lock is let go, or never arrive (a tab closing mid-broadcast), and a reply that
 * ended `done` must never be marked interrupted, nor a mark be written over a newer revision.
 */
async function stored(store: Store, session_id: string): Promise<Stored | undefined> {
  let out: Stored | undefined
  await store.storage.transact(async (reader) => {
    const head = await reader.head(session_id)
    if (!head) return NOTHING
    out = { status: head.meta.status, leaf: head.leaf }
    // Only a session left `working` has a reply to mark: its entries are read for that one alone.
    if (head.meta.status === 'working' && head.leaf !== null)
      out.reply = (await reader.entries(session_id)).find((e) => e.id === head.leaf)
    return NOTHING
  })
  return out
}

/** The reply a writer left unfinished: an assistant message still `end` as appended. */
const unfinished = (
  entry: SessionEntry | undefined,
): entry is SessionEntry & { kind: 'message'; message: AssistantMessage } =>
  entry?.kind === 'message' && entry.message.role === 'assistant' && entry.message.stop_reason === 'end'

/** A call's answer when its guard found the session no longer as it was read: nothing written. */
const CHANGED: { readonly changed: true } = { changed: true }

/** How many times the mark is read and tried again when something wrote between the read and the write. */
const ATTEMPTS = 5

/**
 * Marks the session's reply interrupted if it is still `working`. Runs only while this tab holds
 * the session's reply lock: a writer sets `working` only while holding it, so `working` seen here
 * is a reply nobody writes any more; and of several tabs waiting on the lock, the first marks and
 * the others find `error`. That makes the mark happen once, whichever tabs race for it.
 *
 * The lock is this browser's: a reply another device streams in over sync holds none here. Only
 * a reply a tab of this browser was writing (`ownsReply`) is marked, unless `anyWriter` (the
 * reader pressed Stop: a reply nobody here writes ends, whoever wrote it).
 *
 * The interruption is recorded on the reply itself (the session's leaf: the reply entry, which a
 * writer appends last and a closed writer never follows with its sidecar), so the message keeps
 * its mark after the session's next reply. Everything the mark depends on is read from storage,
 * and checked again in the commit that writes it (the status and leaf by the call's guard on the
 * head as stored, the reply by its revision): the mark is written on the reply as stored or not
 * at all, never from this tab's memory, which may lag storage.
 */
export async function markIfOrphaned(store: Store, session_id: string, anyWriter = false): Promise<boolean> {
  // Memory first: a tab that saw no `working` has nothing to do (the relay brings a later one).
  if (store.closed || (await store.get({ session_id }))?.meta.status !== 'working') return false
  if (!anyWriter && !ownsReply(store, session_id)) return false
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = await stored(store, session_id)
    if (now?.status !== 'working') {
      // Ended by its writer, or marked by another tab: nothing of it is written here any more.
      disownReply(store, session_id)
      return false
    }
    // In the commit: still `working` with the same leaf, else nothing is written.
    const same = (head: SessionHead | undefined): { answer: typeof CHANGED } | undefined =>
      head?.meta.status === 'working' && head.leaf === now.leaf ? undefined : { answer: CHANGED }
    if (unfinished(now.reply)) {
      const marked = await store.call(
        'session::update-message',
        {
          session_id,
          entry_id: now.reply.id,
          content: now.reply.message.content,
          stop_reason: 'error',
          error_message: INTERRUPTED_REASON,
          expected_revision: now.reply.revision,
        },
        { guard: same },
      )
      // Written between the read and the commit (a sync pull), or no longer `working`: read it again.
      if ((marked as unknown) === CHANGED || !marked.updated) continue
    }
    const set: unknown = await store.call(
      'session::set-status',
      { session_id, status: 'error', reason: INTERRUPTED_REASON },
      { guard: same },
    )
    if (set !== CHANGED) {
      disownReply(store, session_id)
      return true
    }
  }
  return false
}

/**
 * Sessions this tab waits on, per store: one lock request per session, however many ask; `stop`
 * once any of them is a Stop (which ends the reply whoever wrote it).
 */
const waiting = new WeakMap<Store, Map<string, { ended: Promise<boolean>; stop: boolean }>>()
/** Aborts the requests of a store whose last watcher stopped. */
const cancels = new WeakMap<Store, AbortController>()

const cancelled = (e: unknown): boolean => e instanceof DOMException && e.name === 'AbortError'

/**
 * Waits until nobody writes a reply into `session_id` (its reply lock free: at once when no tab
 * holds it, else when the writer lets go, by finishing or by its tab closing), then marks the
 * reply interrupted if it was left `working` by a tab of this browser, or by anyone with `stop`
 * (the reader pressed Stop). Resolves true when this call marked it.
 */
export function awaitReplyEnd(
  store: Store,
  session_id: string,
  { stop = false }: { stop?: boolean } = {},
): Promise<boolean> {
  const lockManager = locks()
  if (!lockManager) return Promise.resolve(false)
  let mine = waiting.get(store)
  if (!mine) waiting.set(store, (mine = new Map()))
  const known = mine.get(session_id)
  if (known) {
    known.stop ||= stop
    return known.ended
  }
  let cancel = cancels.get(store)
  if (!cancel || cancel.signal.aborted) cancels.set(store, (cancel = new AbortController()))
  const wait = { ended: Promise.resolve(false), stop }
  wait.ended = lockManager
    .request(replyLock(session_id), { signal: cancel.signal }, async () => {
      // Forgotten before the check: a `working` that arrives after it is another reply to wait for.
      mine.delete(session_id)
      return markIfOrphaned(store, session_id, wait.stop).catch(() => false)
    })
    .catch((e: unknown) => {
      mine.delete(session_id)
      if (cancelled(e)) return false
      throw e
    }) as Promise<boolean>
  mine.set(session_id, wait)
  return wait.ended
}

const watchers = new WeakMap<Store, { count: number; stop: () => void }>()

/**
 * Watches the replies other tabs of this browser write into `store`, and marks one interrupted
 * as soon as its writer's reply lock is let go with the session still `working` (the tab closed,
 * crashed or navigated away mid-reply): every tab on the store then shows it ended, at once.
 * Sessions already `working` when the watch starts are waited on too (or marked at once when no
 * tab holds their lock: the reply of a tab of this browser closed earlier). Another device's
 * reply, streaming in over sync, holds no lock here and was not written by a tab of this browser
 * (`ownsReply`): it is left alone, whether it was `working` before the watch or arrives during
 * it. Shared per store (the bindings all call it); returns a function that stops this watch.
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
      if (
        e.trigger_type === 'session::status-changed' &&
        (e.payload as { status: SessionStatus }).status === 'working'
      ) {
        wait((e.payload as { session_id: string }).session_id)
      }
    }
  })
  void store.list({ status: 'working', limit: 500 }).then(
    ({ sessions }) => {
      if (!done) for (const s of sessions) wait(s.session_id)
    },
    () => {},
  )
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
