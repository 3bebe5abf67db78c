import type { Commit } from '../engine/changes.js'
import type { Engine } from '../engine/engine.js'
import type { RelayMessage } from './message.js'
import { messageOf } from './message.js'

// The sending half of the multi-tab relay (`relay.ts`): gathering and posting this tab's
// commits, and keeping those made while no other tab listened for a newcomer. Fetched with the
// engine's batch code (a tab commits only through it) or by the first commit the relay sees: a
// tab that only reads receives, folds and answers presence with `relay.ts` alone.

/**
 * While batches keep committing, commits gather for at most this long before they are posted
 * together: a post costs about the same whatever it carries (an empty one too), and serial
 * appends would otherwise pay one per commit.
 */
const GATHER_MS = 8

/**
 * How long commits made while no other tab listened are kept (by reference, nothing cloned):
 * a tab that opened its channel meanwhile gets those made since, as if they had been posted.
 */
const KEEP_MS = 2000

/** What `startRelay` calls once this half is here. */
export interface RelaySender {
  /** A peer listening since `from` said hello or here: gets what it missed. */
  greet(peer: string, from: number): void
  /** A commit this tab made (never one relayed to it), `at` when it was announced (`Date.now()`). */
  commit(commit: Commit, at: number): void
  /** Posts what is gathered now (the page is left). */
  post(): void
  stop(): void
}

export function relaySender(engine: Engine, channel: BroadcastChannel, peers: Set<string>): RelaySender {
  /** Commits made while no peer listened, oldest first, with when they were announced. */
  let kept: Array<{ readonly at: number; readonly commit: Commit }> = []
  let pruning: ReturnType<typeof setTimeout> | undefined
  /** Drops kept commits older than KEEP_MS (on every commit too: timers of a background tab wait). */
  const drop = (now: number): void => {
    let i = 0
    while (i < kept.length && kept[i].at < now - KEEP_MS) i++
    if (i) kept.splice(0, i)
  }
  const prune = (): void => {
    pruning = undefined
    drop(Date.now())
    if (kept.length) arm()
  }
  const arm = (): void => {
    if (pruning) return
    pruning = setTimeout(prune, KEEP_MS)
    // Node: a waiting timer must not keep the process alive.
    ;(pruning as { unref?: () => void }).unref?.()
  }
  /** A peer is listening since `from`: posts the kept commits it would have received, in order. */
  const greet = (peer: string, from: number): void => {
    peers.add(peer)
    // Commits still waiting to be posted came first (a peer left, then this one came).
    for (const k of kept) if (k.at >= from) queue(k.commit)
    kept = []
    post()
  }
  // Posting clones the commit: done in a task of its own, after this tab's callers and live
  // queries got it, so the clone is not on their path. A MessageChannel task, not a timer:
  // timers in a background tab are throttled to one a second, and a background tab streaming
  // a reply is exactly the one other tabs are watching. Commits are posted in order. When that
  // task finds the next batch already committing (a caller awaiting each write), it waits for a
  // later one: commits gather until the engine is idle or the oldest waited GATHER_MS.
  let pending: RelayMessage[] = []
  let oldest = 0
  const post = (): void => {
    const out = pending
    pending = []
    if (out.length) channel.postMessage(out.length === 1 ? out[0] : out)
  }
  let scheduled = false
  let waitingIdle = false
  const wakeUp = (): void => {
    scheduled = false
    if (!pending.length) return
    if (engine.pendingOverlay() && performance.now() - oldest < GATHER_MS) {
      // Its commit schedules the next wake-up; should it fail, the engine going idle does.
      if (!waitingIdle) {
        waitingIdle = true
        void engine.flush().then(() => {
          waitingIdle = false
          schedule()
        })
      }
      return
    }
    post()
  }
  const wake = typeof MessageChannel === 'undefined' ? undefined : new MessageChannel()
  if (wake) {
    wake.port1.onmessage = wakeUp
    // Node: a waiting port must not keep the process alive.
    ;(wake.port1 as { unref?: () => void }).unref?.()
  }
  const schedule = (): void => {
    if (scheduled) return
    scheduled = true
    if (wake) wake.port2.postMessage(0)
    else setTimeout(wakeUp, 0)
  }
  /** Adds a commit to the next post; false when it wrote nothing to relay. */
  const queue = (commit: Commit): boolean => {
    const message = messageOf(commit)
    if (!message) return false
    if (!pending.length) oldest = performance.now()
    pending.push(message)
    return true
  }
  return {
    greet,
    commit(commit, at) {
      if (!peers.size) {
        // A commit that only re-read a session from disk has nothing another tab needs.
        if (!commit.events.length && [...commit.changes.values()].every((c) => c.reloaded)) return
        drop(at)
        kept.push({ at, commit })
        return arm()
      }
      if (queue(commit)) schedule()
    },
    post,
    stop() {
      post()
      if (pruning) clearTimeout(pruning)
      kept = []
      wake?.port1.close()
    },
  }
}
