import { backoffDelay } from './backoff.js'
import { loadCursor } from './checkpoint.js'
import { pullAll } from './pull.js'
import { pushAll, seed } from './push.js'
import { closeStream, outbox, setStatus, type Replication } from './state.js'
import { openStream } from './stream.js'
import { TransportError } from './transport.js'

const isOffline = (): boolean => typeof navigator !== 'undefined' && navigator.onLine === false

/** Waits `ms`, or until woken (new local changes, `online`) when `wakeable`, or stopped. */
const pause = (s: Replication, ms: number, signal: AbortSignal, wakeable = true): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      if (s.wakeUp === done) s.wakeUp = undefined
      signal.removeEventListener('abort', done)
      resolve()
    }
    // Stopped already (during the work before this pause): an abort listener would never fire.
    if (signal.aborted) return resolve()
    const timer = ms === Infinity ? undefined : setTimeout(done, ms)
    if (wakeable) s.wakeUp = done
    signal.addEventListener('abort', done)
  })

/**
 * The leader's loop, until it steps down: push the outbox, pull to the server's head, follow
 * the stream, and sleep until something wakes it (a local commit, the stream, going online);
 * on a failure, back off (or wait as long as the server asked) and go round again.
 */
export async function leadLoop(s: Replication, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return
  s.leader = true
  try {
    await replicate(s, signal)
  } finally {
    // However the loop ends, this tab no longer leads (a flush then asks whoever does).
    closeStream(s)
    s.leader = false
  }
}

/** The loop itself (`leadLoop` marks this tab the leader around it). */
async function replicate(s: Replication, signal: AbortSignal): Promise<void> {
  let failures = 0
  let synced = false
  // The cursor is read as a tab starts leading, and again after a failure to read it: a storage
  // error or a lock at that moment is a failure like any other, retried after a backoff.
  let cursor = false
  while (!signal.aborted) {
    if (isOffline()) {
      closeStream(s)
      setStatus(s, { state: 'offline' })
      await pause(s, Infinity, signal)
      continue
    }
    try {
      s.dirty = false
      setStatus(s, { state: synced ? 'syncing' : 'connecting' })
      if (!cursor) {
        await loadCursor(s)
        // What the stored counters say now: another tab may have led meanwhile.
        s.sealing?.reload()
        cursor = true
      }
      await seed(s)
      await pushAll(s, signal)
      await pullAll(s, signal)
      openStream(s)
      failures = 0
      synced = true
      if (!s.dirty) {
        setStatus(s, { state: 'idle', last_synced_at: s.now(), pending: (await outbox(s)).length })
        for (const done of s.flushWaiters.splice(0)) done()
        await pause(s, Infinity, signal)
      }
    } catch (e) {
      if (signal.aborted) break
      closeStream(s)
      const fatal = e instanceof TransportError && !e.retryable
      // A server that says when to come back (429, 503 with Retry-After) is taken at its word,
      // plus jitter so throttled clients do not return in lockstep, rather than growing the
      // backoff. The outbox is left as it is and pushed again then.
      const asked = e instanceof TransportError && e.retryable ? e.retryAfterMs : undefined
      if (asked === undefined) failures++
      setStatus(s, {
        state: isOffline() ? 'offline' : 'error',
        error: e instanceof Error ? e.message : String(e),
      })
      const delay =
        asked !== undefined
          ? Math.max(asked, 250) + Math.random() * Math.min(asked, 1000)
          : fatal
            ? Math.max(backoffDelay(failures), 30_000)
            : backoffDelay(failures)
      // Told when to come back: going online does not cut that wait short either.
      s.backingOff = true
      await pause(s, delay, signal, asked === undefined)
      s.backingOff = false
    }
  }
}
