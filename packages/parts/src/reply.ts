import {
  SessionError,
  type ContentBlock,
  type Json,
  type SessionMeta,
  type StopReason,
  type Store,
  type Usage,
} from '@colloquy/core'
import { SIDECAR, type SidecarData } from './nodes.js'
import { INTERRUPTED_REASON, replyLock } from './reply-lock.js'
import { awaitReplyEnd, markIfOrphaned } from './reply-watch.js'
import { disownReply, ownReply } from './reply-owner.js'

export { INTERRUPTED_REASON, replyLock }

/**
 * Every session the adapters create starts with this hidden custom entry (as in the demo apps):
 * the contract cannot append a second root, so without it the first message could not get an
 * edited sibling.
 */
export const THREAD_ROOT = 'thread_root'

/** The status reason of a reply stopped by the user. */
export const STOPPED_REASON = 'stopped'

/** True when a session's last reply did not finish: its tab closed mid-stream, or it failed. */
export const isInterrupted = (meta: SessionMeta | null | undefined): boolean => meta?.status === 'error'

export interface ReplyStart {
  session_id: string
  /** The entry the reply answers (the user message, or the end of its folded results). */
  parent_id: string
  /** The reply's entry id, when the framework chose one (the AI SDK's message id). */
  entry_id?: string
  model: string
  provider: string
}

export interface ReplyOutcome {
  content: ContentBlock[]
  sidecar?: SidecarData | null
  stopped?: boolean
  error?: unknown
  usage?: Usage
}

/** A reply being streamed into a session. Bound to its session: switching threads never redirects it. */
export interface ReplyWriter {
  readonly session_id: string
  readonly entry_id: string
  /** Aborted when Stop is pressed for this session, in this tab or another one. */
  readonly signal: AbortSignal
  /**
   * Persists the content so far. Not awaited per chunk: the first chunk after a pause is written
   * at once, the ones arriving within `PERSIST_MS` of it as one write of the newest at its end.
   */
  update(content: ContentBlock[]): void
  /** Writes the last content and the sidecar, then sets the session `done` (or `error`). Idempotent. */
  finish(outcome: ReplyOutcome): Promise<void>
}

/** Replies streaming in this tab, by store name and session, for Stop from any tab. */
const running = new Map<string, AbortController>()
const channels = new Map<string, BroadcastChannel | null>()
const stopKey = (store: Store, session_id: string): string => `${store.storage.name}\u0000${session_id}`

/** The channel Stop is posted on (the demo apps' name, so their tabs and these adapters stop each other). */
function stopChannel(store: Store): BroadcastChannel | null {
  const name = store.storage.name
  if (!channels.has(name)) {
    const ch =
      typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel(`colloquy-chat-stop:${name}`) : null
    ch?.addEventListener('message', (e: MessageEvent<string>) =>
      running.get(`${name}\u0000${e.data}`)?.abort(),
    )
    channels.set(name, ch)
  }
  return channels.get(name)!
}

/**
 * Stops the reply streaming into `session_id`, whichever tab writes it: the writer (this tab or
 * another live one, told over the channel) ends it as stopped; a reply whose writer is gone is
 * marked interrupted as soon as its lock is free (at once, or when the closing tab's lock goes).
 */
export function stopReply(store: Store, session_id: string): void {
  running.get(stopKey(store, session_id))?.abort()
  stopChannel(store)?.postMessage(session_id)
  void awaitReplyEnd(store, session_id, { stop: true }).catch(() => {})
}

/** What a reply's message records about how it ended, when it did not simply finish. */
export interface ReplyEnding {
  stop_reason: StopReason
  error_message?: string
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * The fields of `updateMessage` that record on a reply's message how it ended: `error` with the
 * error's message for a failed reply, `aborted` for a stopped one, nothing for one that finished.
 * The session's status tells only of its newest reply; these stay with the message.
 */
export function replyEnding(outcome: { stopped?: boolean; error?: unknown }): ReplyEnding | undefined {
  if (outcome.error) return { stop_reason: 'error', error_message: messageOf(outcome.error) }
  return outcome.stopped ? { stop_reason: 'aborted' } : undefined
}

/**
 * How often, at most, a streaming reply's content is written (once a frame at 60 Hz). Each write
 * is an IndexedDB transaction, which costs the page's main thread a few tenths of a millisecond
 * however little it carries: a stream whose chunks arrive faster than the frames that show them
 * would otherwise pay that per chunk. Other tabs still see the reply grow frame by frame, and a
 * tab being hidden (closed, navigated away) writes what waits at once (`pagehide`).
 */
export const PERSIST_MS = 16

/** How long a reply waits for the session's reply lock. */
const LOCK_WAIT_MS = 1000

const locks = (): LockManager | undefined => (typeof navigator !== 'undefined' ? navigator.locks : undefined)

const gone = (e: unknown): boolean =>
  e instanceof SessionError && (e.code === 'session/not_found' || e.code === 'session/entry_not_found')

/**
 * Starts a reply: takes the session's reply lock (so other tabs can tell a live reply from an
 * orphaned one), appends the empty assistant entry and sets the session `working` in one batch.
 * Rejects when another tab is already replying in this session.
 */
export async function startReply(store: Store, start: ReplyStart): Promise<ReplyWriter> {
  const { session_id } = start
  stopChannel(store)
  const controller = new AbortController()
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  const lockManager = locks()
  if (lockManager) {
    // Queued, not `ifAvailable`: a tab checking for interrupted replies holds the lock for a
    // moment. A reply streaming elsewhere holds it for long: after a second, this one gives up.
    await new Promise<void>((resolve, reject) => {
      lockManager
        .request(replyLock(session_id), { signal: AbortSignal.timeout(LOCK_WAIT_MS) }, () => {
          resolve()
          return held
        })
        .catch((e: unknown) =>
          reject(
            e instanceof DOMException && (e.name === 'AbortError' || e.name === 'TimeoutError')
              ? new Error('a reply is already streaming in this chat')
              : e,
          ),
        )
    })
  }
  try {
    // Before `working`: a tab of this browser finding it `working` with the lock free knows it was ours.
    ownReply(store, session_id)
    const appended = store.append({
      session_id,
      parent_id: start.parent_id,
      ...(start.entry_id !== undefined && { entry_id: start.entry_id }),
      message: {
        role: 'assistant',
        content: [],
        stop_reason: 'end',
        model: start.model,
        provider: start.provider,
        timestamp: Date.now(),
      },
    })
    const status = store.setStatus({ session_id, status: 'working', reason: 'replying' })
    const [{ entry_id }] = await Promise.all([appended, status])
    const key = stopKey(store, session_id)
    running.set(key, controller)
    let last: Promise<unknown> = Promise.resolve()
    let failed: unknown = null
    let finished: Promise<void> | null = null
    const write = (content: ContentBlock[], usage?: Usage, ending?: ReplyEnding): void => {
      last = store
        .updateMessage({ session_id, entry_id, content, ...(usage && { usage }), ...ending })
        .catch((e) => {
          failed ??= e
        })
    }
    // The newest content not written yet, and the window in which updates wait for one write.
    let newest: ContentBlock[] | null = null
    let gathering: ReturnType<typeof setTimeout> | null = null
    const open = (): void => {
      gathering = setTimeout(() => {
        gathering = null
        if (newest === null || finished || failed !== null) return
        write(newest)
        newest = null
        open()
      }, PERSIST_MS)
    }
    // A page being hidden (closed, navigated away, frozen) writes what waits at once rather than
    // leaving it to a timer that may never fire: the window costs nothing on the way out.
    const hidden = (): void => {
      if (newest === null || finished || failed !== null) return
      write(newest)
      newest = null
    }
    const pageEvents = typeof globalThis.addEventListener === 'function' ? globalThis : undefined
    pageEvents?.addEventListener('pagehide', hidden)
    return {
      session_id,
      entry_id,
      signal: controller.signal,
      update(content) {
        if (finished || failed !== null) return
        if (gathering !== null) {
          newest = content
          return
        }
        write(content)
        open()
      },
      finish(outcome) {
        finished ??= (async () => {
          // The outcome's content is the newest: what waits for the window is dropped.
          if (gathering !== null) clearTimeout(gathering)
          pageEvents?.removeEventListener('pagehide', hidden)
          newest = null
          try {
            if (failed === null) write(outcome.content, outcome.usage, replyEnding(outcome))
            await last
            if (outcome.sidecar)
              await store.append({
                session_id,
                parent_id: entry_id,
                custom: { custom_type: SIDECAR, data: outcome.sidecar as unknown as Json },
              })
            const error = outcome.error ?? failed
            if (error) await store.setStatus({ session_id, status: 'error', reason: messageOf(error) })
            else
              await store.setStatus({
                session_id,
                status: 'done',
                reason: outcome.stopped ? STOPPED_REASON : null,
              })
          } catch (e) {
            // The session was deleted mid-reply (here or in another tab): nothing is left to report to.
            if (!gone(e)) throw e
          } finally {
            if (running.get(key) === controller) running.delete(key)
            disownReply(store, session_id)
            release()
          }
        })()
        return finished
      },
    }
  } catch (e) {
    disownReply(store, session_id)
    release()
    throw e
  }
}

/**
 * Marks sessions left `working` by a tab that closed mid-reply as interrupted (status `error`),
 * once. A session whose reply lock is held is still streaming in another tab and is left alone
 * (`watchReplies` waits for it).
 */
export async function recoverInterrupted(store: Store, session_ids?: readonly string[]): Promise<void> {
  const lockManager = locks()
  if (!lockManager) return
  const ids =
    session_ids ?? (await store.list({ status: 'working', limit: 500 })).sessions.map((s) => s.session_id)
  await Promise.all(
    ids.map((session_id) =>
      lockManager.request(replyLock(session_id), { ifAvailable: true }, async (lock) => {
        if (lock) await markIfOrphaned(store, session_id)
      }),
    ),
  )
}

/** A new session with its hidden root entry; resolves with its id. */
export async function createThread(store: Store, title = ''): Promise<string> {
  const { session_id } = await store.create({ title })
  await store.append({ session_id, custom: { custom_type: THREAD_ROOT, data: {} } })
  return session_id
}
