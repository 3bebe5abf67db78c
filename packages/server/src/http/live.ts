import type { JsonObject } from '@colloquy/core'
import type { WSContext, WSEvents } from 'hono/ws'
import type { WebSocket } from 'ws'
import type { Principal } from '../auth.js'
import { feedFilter, type Scope } from './access.js'
import type { ChangeFeed } from '../changes/change-feed.js'
import type { CommittedChange } from '../changes/change-log.js'
import type { SequencedChange, StreamMessage } from '@colloquy/core/protocol'
import { toWire } from '../errors.js'
import { parsePushInSlices, push } from './push.js'
import type { Service } from './rpc.js'
import type { Tenancy } from '../tenancy.js'
import type { JsonLimits } from './json-limits.js'
import { readInOrder, sendGathered, sendJson } from './ws-json.js'

export interface StreamLimits {
  pageSize: number
  maxBatch: number
  maxBuffered: number
  json: JsonLimits
}

// What `GET /sync/stream` sends and accepts is the protocol's (`@colloquy/core/protocol`).
export type { StreamMessage }

/** The key of the streams that see every session (a symbol: no principal can be named so). */
const ALL: unique symbol = Symbol('all sessions')

type Listener = (changes: readonly CommittedChange[], head: number) => void

/**
 * Fans each commit out to the live streams, by scope: a commit's changes are grouped by owner
 * once, so an owner's stream only ever looks at its own (streams granted `all` see everything).
 * Every stream hears about every commit, to move its checkpoint.
 */
export class LiveHub {
  /** Streams by owner; `ALL` keys the streams of scopes granted every session. */
  private readonly streams = new Map<Principal | typeof ALL, Set<Listener>>()

  constructor(changes: ChangeFeed, tenancy: Tenancy) {
    changes.subscribe((batch, head) => {
      const byOwner = new Map<Principal, CommittedChange[]>()
      if (this.streams.size > (this.streams.has(ALL) ? 1 : 0)) {
        for (const c of batch) {
          const owner = tenancy.ownerOf(c.metadata)
          if (owner === undefined || !this.streams.has(owner)) continue
          const list = byOwner.get(owner)
          if (list) list.push(c)
          else byOwner.set(owner, [c])
        }
      }
      for (const [key, listeners] of this.streams) {
        const mine = key === ALL ? batch : (byOwner.get(key) ?? [])
        for (const listener of listeners) listener(mine, head)
      }
    })
  }

  subscribe(scope: Scope, listener: Listener): () => void {
    const key = scope.kind === 'all' ? ALL : scope.owner
    let set = this.streams.get(key)
    if (!set) this.streams.set(key, (set = new Set()))
    set.add(listener)
    return () => {
      set.delete(listener)
      if (!set.size && this.streams.get(key) === set) this.streams.delete(key)
    }
  }
}

/**
 * The live change stream from a checkpoint: the backlog in pages (exactly what pull returns),
 * `ready`, then every commit as it happens. Commits made while the backlog is read are held and
 * sent after it, minus what the backlog already covered. A client may also push through it.
 */
export function liveStream(
  service: Service & { changes: ChangeFeed; hub: LiveHub },
  scope: Scope,
  since: number,
  limits: StreamLimits,
  /** The server's log, where a 5xx answered in an error frame leaves its details. */
  log: (message: string) => void,
  epoch?: string,
): WSEvents<WebSocket> {
  const filter: JsonObject | undefined = feedFilter(service.tenancy, scope)
  const strip = (c: CommittedChange): SequencedChange => ({ seq: c.seq, change: c.change })
  let stop = (): void => {}
  let closed = false
  return {
    onOpen(_event, ws) {
      const send = (m: StreamMessage): boolean => sendJson(ws, m, limits.maxBuffered)
      let held: { changes: CommittedChange[]; head: number } | undefined = { changes: [], head: 0 }
      let checkpoint = since
      let prev = since
      const deliver = (changes: SequencedChange[], head: number, live = false): boolean => {
        if (!changes.length) return true
        const m: StreamMessage = { type: 'changes', changes, prev, checkpoint, head }
        // A commit's changes leave with the answers to the pushes that made them (same tick).
        const ok = live ? sendGathered(ws, m, limits.maxBuffered) : send(m)
        prev = changes[changes.length - 1].seq
        return ok
      }
      // The hub hands over this principal's changes only.
      stop = service.hub.subscribe(scope, (changes, head) => {
        if (held) {
          held.changes.push(...changes)
          held.head = head
          return
        }
        // A feed that reads the log and announces it later (PostgreSQL's reader awaits the
        // commits' events in between) can announce records the backlog page already sent: those
        // are not sent twice, and the checkpoint never goes back.
        const fresh = changes.filter((c) => c.seq > checkpoint)
        checkpoint = Math.max(checkpoint, head)
        deliver(fresh.map(strip), checkpoint, true)
      })
      void (async () => {
        try {
          for (let first = true; ; first = false) {
            const page = await service.changes.page(
              checkpoint,
              limits.pageSize,
              filter,
              first ? epoch : undefined,
            )
            if (closed) return
            if (page.reset) {
              // An unusable cursor: say so, then send everything from the start.
              send({
                type: 'reset',
                checkpoint: 0,
                head: page.head,
                ...(page.epoch !== undefined && { epoch: page.epoch }),
              })
              checkpoint = prev = 0
              continue
            }
            checkpoint = page.checkpoint
            if (!deliver(page.changes, page.head)) return
            if (!page.more) break
          }
          const late = held!.changes.filter((c) => c.seq > checkpoint).map(strip)
          checkpoint = Math.max(checkpoint, held!.head)
          held = undefined
          deliver(late, checkpoint)
          const e = service.changes.epoch
          send({
            type: 'ready',
            checkpoint,
            head: Math.max(checkpoint, service.changes.head),
            ...(e !== undefined && { epoch: e }),
          })
        } catch (e) {
          send({ type: 'error', error: toWire(e, log).body.error })
          ws.close(1011, 'backlog failed')
        }
      })()
    },
    onMessage: readInOrder<WSContext<WebSocket>>(
      limits.json,
      (read, ws, data) => {
        if (closed) return
        const send = (m: StreamMessage): boolean => sendGathered(ws, m, limits.maxBuffered)
        if ('refused' in read)
          return void send({ type: 'error', error: toWire(read.refused, log).body.error })
        const { msg } = read
        if (msg.type === 'ping') return void send({ type: 'pong', id: msg.id })
        if (msg.type !== 'push')
          return void send({
            type: 'error',
            id: msg.id,
            error: {
              code: 'session/invalid_request',
              message: 'session/invalid_request: expected a ping or push message',
            },
          })
        void (async () => {
          try {
            const results = await push(
              service,
              scope,
              await parsePushInSlices(msg, limits.maxBatch),
              Buffer.byteLength(data as string),
            )
            send({ type: 'pushed', id: msg.id, results })
          } catch (e) {
            send({ type: 'error', id: msg.id, error: toWire(e, log).body.error })
          }
        })()
      },
      (e) => log(`live socket: ${String(e)}`),
    ),
    onClose() {
      closed = true
      stop()
    },
  }
}
