import type { ChangePayload, Commit } from './changes.js'
import { engineWrites, type Engine } from './engine.js'
import { once } from './once.js'
import type { RelaySender } from './relay-send.js'
import type { EventEnvelope } from './model.js'

export interface RelayMessage {
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

/** What is posted for a commit; undefined when it wrote nothing another tab needs. */
export function messageOf(commit: Commit): RelayMessage | undefined {
  const payload = payloadOf(commit)
  if (!payload.deleted.length && !payload.heads.length && !payload.entries.length && !commit.events.length) return undefined
  return { payload, events: commit.events }
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

/** The sending half: fetched with the engine's batch code (see `relay-send.ts`). */
const senderCode = once(() => import('./relay-send.js'))

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
  /** The sending half, once here (`relay-send.ts`). */
  let sender: RelaySender | undefined
  /** Commits made before it was here (a server's changes applied before any write), in order. */
  let early: Array<{ readonly at: number; readonly commit: Commit }> | undefined
  let stopped = false
  engineWrites.add(senderCode)
  const send = (): RelaySender => (sender ??= senderCode.value!.relaySender(engine, channel, peers))
  /** A peer is listening since `from`: the sending half posts what it missed (nothing before it is here). */
  const greet = (peer: string, from: number): void => {
    peers.add(peer)
    sender?.greet(peer, from)
  }
  const say = (m: PresenceMessage): void => channel.postMessage(m)
  /**
   * The page is left (or the relay stops) before the sending half came: what it would have
   * posted goes out now, in order, as the plain messages a receiver takes (`messageOf` is here).
   * Without a peer nothing is posted, as the sending half would not.
   */
  const postEarly = (): void => {
    if (!early?.length || !peers.size) return
    const out = early.map((e) => messageOf(e.commit)).filter((m) => m !== undefined)
    // Posted once: the sending half, when it comes, does not post them again.
    early.length = 0
    if (out.length) channel.postMessage(out.length === 1 ? out[0] : out)
  }
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
  // A tab closing right after a commit still posts it. A page left is no longer posted to, and
  // says hello again if the back/forward cache brings it back.
  const hide = (): void => {
    sender?.post()
    postEarly()
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
    // Commits made while the sending half was fetched go first.
    if (senderCode.value && !early) return send().commit(commit, Date.now())
    // A commit that only re-read a session from disk has nothing another tab needs.
    if (!commit.events.length && [...commit.changes.values()].every((c) => c.reloaded)) return
    if (!early) {
      early = []
      senderCode.load()!.then(
        () => {
          if (stopped) return
          for (const e of early!) send().commit(e.commit, e.at)
          early = undefined
        },
        () => (early = undefined),
      )
    }
    early.push({ at: Date.now(), commit })
  })
  say({ hello: id, since })
  return () => {
    sub.unsubscribe()
    target?.removeEventListener('pagehide', hide)
    target?.removeEventListener('pageshow', show)
    stopped = true
    sender?.stop()
    postEarly()
    say({ bye: id })
    channel.close()
  }
}
