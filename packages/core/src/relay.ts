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

/*
 * What other tabs post is checked before it is used: a tab running another version of the app
 * (or any script of the origin) may post anything on the channel, and `fold` dereferences what
 * it is given while it changes the state, so a malformed payload would leave the state half
 * changed with nothing announced. The check is of the shape `fold`, `State` and the events'
 * subscribers rely on, not of the entries' content: that was checked by the tab that wrote them
 * (the full record validators are fetched on first use and would cost every relayed token a
 * walk of the whole message). A message that fails it is dropped.
 */
type Loose = Record<string, unknown>
const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null
const isString = (v: unknown): v is string => typeof v === 'string'
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
/** Relay ids are short (see `startRelay`); anything longer is not one. */
const isPeerId = (v: unknown): v is string => isString(v) && v.length > 0 && v.length <= 64
const isHead = (v: unknown): boolean =>
  isObject(v) && Number.isSafeInteger(v.v) && (v.leaf === null || isString(v.leaf)) &&
  isObject(v.meta) && isString(v.meta.session_id) && (v.attachments === undefined || Array.isArray(v.attachments))
const isEntry = (v: unknown): boolean =>
  isObject(v) && isString(v.id) && (v.parent_id === null || isString(v.parent_id)) && Number.isSafeInteger(v.revision) &&
  isTime(v.timestamp) && (v.kind === 'message' || v.kind === 'custom')
const isSessionEntries = (v: unknown): boolean => Array.isArray(v) && v.length === 2 && isString(v[0]) && Array.isArray(v[1]) && v[1].every(isEntry)
/** What `EventBus` filters on: the trigger and the payload's session. */
const isEvent = (e: unknown): boolean => isObject(e) && isString(e.trigger_type) && isObject(e.payload) && isString(e.payload.session_id) &&
  (e.session_metadata == null || isObject(e.session_metadata))
const isRelayMessage = (m: unknown): m is RelayMessage => {
  if (!isObject(m) || !isObject(m.payload) || !Array.isArray(m.events) || !m.events.every(isEvent)) return false
  const p = m.payload
  return Array.isArray(p.deleted) && p.deleted.every(isString) && Array.isArray(p.heads) && p.heads.every(isHead) &&
    Array.isArray(p.entries) && p.entries.every(isSessionEntries)
}

/**
 * While batches keep committing, commits gather for at most this long before they are posted
 * together: a post costs about the same whatever it carries (an empty one too), and serial
 * appends would otherwise pay one per commit.
 */
const GATHER_MS = 8

/**
 * Presence on the channel. A relay posts commits only while another one listens: cloning every
 * commit (a streamed reply's events carry the whole message each time) costs a lone tab more
 * than the rest of its write path. `hello` when starting (or back from the back/forward cache),
 * `here` in reply to it, `bye` when stopping or leaving the page. `since` is when the sender's
 * channel opened (`Date.now()`, one clock for every tab of a browser).
 */
type PresenceMessage =
  | { readonly hello: string; readonly since: number }
  | { readonly here: string; readonly to: string; readonly since: number }
  | { readonly bye: string }

/**
 * How long commits made while no other tab listened are kept (by reference, nothing cloned):
 * a tab that opened its channel meanwhile gets those made since, as if they had been posted.
 */
const KEEP_MS = 2000

/**
 * Multi-tab relay: every commit this store makes is posted on a BroadcastChannel named after the
 * database, and commits posted by other tabs are folded in and re-emitted here, so events and
 * live queries in every tab see every tab's writes. Returns a function that stops it.
 *
 * A tab alone posts nothing. It keeps its last commits instead, and when another tab says
 * `hello` it posts those made since that tab's channel opened: what that tab would have received
 * had they been posted at once. The other tab learns of this one from its `here` and does the
 * same the other way.
 */
export function startRelay(engine: Engine, channelName: string): () => void {
  if (typeof BroadcastChannel === 'undefined') return () => {}
  const channel = new BroadcastChannel(channelName)
  const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`
  let since = Date.now()
  /** Other relays listening on the channel. One that crashed without `bye` only costs posts. */
  const peers = new Set<string>()
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
  const say = (m: PresenceMessage): void => channel.postMessage(m)
  channel.onmessage = (event: MessageEvent<unknown>) => {
    const data = event.data
    if (Array.isArray(data)) {
      for (const m of data) if (isRelayMessage(m)) engine.applyExternal('tab', m.payload, m.events)
    } else if (isRelayMessage(data)) engine.applyExternal('tab', data.payload, data.events)
    else if (!isObject(data)) return
    else if (isPeerId(data.hello) && isTime(data.since)) {
      greet(data.hello, data.since)
      say({ here: id, to: data.hello, since })
    } else if (isPeerId(data.here) && isTime(data.since)) {
      if (data.to === id) greet(data.here, data.since)
    } else if (isPeerId(data.bye)) peers.delete(data.bye)
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
  /** Adds a commit to the next post; false when it wrote nothing to relay. */
  const queue = (commit: Commit): boolean => {
    const payload = payloadOf(commit)
    if (!payload.deleted.length && !payload.heads.length && !payload.entries.length && !commit.events.length) return false
    if (!pending.length) oldest = performance.now()
    pending.push({ payload, events: commit.events })
    return true
  }
  // A tab closing right after a commit still posts it. A page left is no longer posted to, and
  // says hello again if the back/forward cache brings it back.
  const hide = (): void => {
    post()
    say({ bye: id })
  }
  const show = (event: Event): void => {
    if (!(event as PageTransitionEvent).persisted) return
    since = Date.now()
    say({ hello: id, since })
  }
  const target = typeof addEventListener === 'function' ? globalThis : undefined
  target?.addEventListener('pagehide', hide)
  target?.addEventListener('pageshow', show)
  const sub = engine.commits.subscribe((commit) => {
    // What this tab wrote, itself or by applying a server's changes; never what it was relayed.
    if (commit.source === 'tab') return
    if (!peers.size) {
      // A commit that only re-read a session from disk has nothing another tab needs.
      if (!commit.events.length && [...commit.changes.values()].every((c) => c.reloaded)) return
      const at = Date.now()
      drop(at)
      kept.push({ at, commit })
      return arm()
    }
    if (queue(commit)) schedule()
  })
  say({ hello: id, since })
  return () => {
    sub.unsubscribe()
    target?.removeEventListener('pagehide', hide)
    target?.removeEventListener('pageshow', show)
    post()
    say({ bye: id })
    if (pruning) clearTimeout(pruning)
    kept = []
    wake?.port1.close()
    channel.close()
  }
}
