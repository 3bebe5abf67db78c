import type { Commit } from '../engine/changes.js'
import type { Engine } from '../engine/engine.js'
import { once } from '../util/once.js'
import type { RelaySender } from './relay-send.js'
import { isObject, isString, isTime, messageOf } from './message.js'

/** Relay ids are short (see `startRelay`); anything longer is not one. */
const isPeerId = (v: unknown): v is string => isString(v) && v.length > 0 && v.length <= 64

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
export const senderCode = once(() => import('./relay-send.js'))
/**
 * The receiving half (the checks of what other tabs post, and folding it in): fetched on the
 * first commit message or with the engine's batch code. Presence needs none of it.
 */
export const receiverCode = once(() => import('./relay-receive.js'))

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
/** Fetches both halves: a store that relays does it with the engine's batch code (see `createStore`). */
export const relayCode = (): Promise<unknown> => Promise.all([senderCode.load(), receiverCode.load()])

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
  const send = (): RelaySender => (sender ??= senderCode.value!.relaySender(engine, channel, peers))
  /** A peer is listening since `from`: the sending half posts what it missed (nothing before it is here). */
  const greet = (peer: string, from: number): void => {
    peers.add(peer)
    sender?.greet(peer, from)
  }
  const say = (m: PresenceMessage): void => channel.postMessage(m)
  /** Commit messages received before the receiving half was here, in order. */
  const inbox: unknown[] = []
  let fetching = false
  const drain = (): void => {
    fetching = false
    const take = inbox.splice(0)
    if (!stopped) for (const data of take) receiverCode.value!.receive(engine, data)
  }
  const receive = (data: unknown): void => {
    if (receiverCode.value && !inbox.length) return receiverCode.value.receive(engine, data)
    inbox.push(data)
    if (fetching) return
    fetching = true
    // Should the fetch fail, the next commit message tries again, after those waiting.
    receiverCode.load()!.then(drain, () => (fetching = false))
  }
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
    // A commit, or several gathered: checked and folded by the receiving half.
    if (Array.isArray(data) || (isObject(data) && 'payload' in data)) return receive(data)
    if (!isObject(data)) return
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
