import type { ChangePayload, Commit } from './changes.js'
import type { Engine } from './engine.js'
import type { EventEnvelope } from './model.js'

interface RelayMessage {
  readonly payload: ChangePayload
  readonly events: readonly EventEnvelope[]
}

/** The writes behind a commit's changes, minus what was merely re-read from disk. */
export function payloadOf(commit: Commit): ChangePayload {
  const deleted: string[] = []
  const heads: ChangePayload['heads'][number][] = []
  const entries: Array<readonly [string, ChangePayload['entries'][number][1]]> = []
  for (const c of commit.changes.values()) {
    if (c.reloaded) continue
    if (c.head === null) deleted.push(c.session_id)
    else if (c.head) heads.push(c.head)
    if (c.added.length || c.updated.length) entries.push([c.session_id, [...c.added, ...c.updated]])
  }
  return { deleted, heads, entries }
}

/**
 * While batches keep committing, commits gather for at most this long before they are posted
 * together: a post costs about the same whatever it carries (an empty one too), and serial
 * appends would otherwise pay one per commit.
 */
const GATHER_MS = 8

/**
 * Multi-tab relay: every commit this store makes is posted on a BroadcastChannel named after the
 * database, and commits posted by other tabs are folded in and re-emitted here, so events and
 * live queries in every tab see every tab's writes. Returns a function that stops it.
 */
export function startRelay(engine: Engine, channelName: string): () => void {
  if (typeof BroadcastChannel === 'undefined') return () => {}
  const channel = new BroadcastChannel(channelName)
  channel.onmessage = (event: MessageEvent<RelayMessage | RelayMessage[]>) => {
    const data = event.data
    for (const m of Array.isArray(data) ? data : [data]) engine.applyExternal('tab', m.payload, m.events)
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
    if (engine.pendingDraft() && performance.now() - oldest < GATHER_MS) {
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
  // A tab closing right after a commit still posts it.
  const target = typeof addEventListener === 'function' ? globalThis : undefined
  target?.addEventListener('pagehide', post)
  const sub = engine.commits.subscribe((commit) => {
    // What this tab wrote, itself or by applying a server's changes; never what it was relayed.
    if (commit.source === 'tab') return
    const payload = payloadOf(commit)
    if (!payload.deleted.length && !payload.heads.length && !payload.entries.length && !commit.events.length) return
    if (!pending.length) oldest = performance.now()
    pending.push({ payload, events: commit.events })
    schedule()
  })
  return () => {
    sub.unsubscribe()
    target?.removeEventListener('pagehide', post)
    post()
    wake?.port1.close()
    channel.close()
  }
}
