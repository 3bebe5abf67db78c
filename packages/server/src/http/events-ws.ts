import type { EventConfig, Store, TriggerType } from '@colloquy/core'
import { parseEventConfig } from '@colloquy/core/wire'
import type { WSContext, WSEvents } from 'hono/ws'
import type { WebSocket } from 'ws'
import type { Scope } from './access.js'
import { invalidRequest, toWire } from '../errors.js'
import type { Tenancy } from '../tenancy.js'
import type { JsonLimits } from './json-limits.js'
import { readInOrder, sendJson } from './ws-json.js'

/**
 * `GET /events`: the contract's six event types over a WebSocket. A client subscribes with a
 * binding config (validated by the core, errors answered per subscription) and receives the
 * payloads; with tenancy every binding is narrowed to the caller's sessions. `ping` is answered
 * after everything sent before it, which is how a client waits for the events of a call it made.
 */
/** Subscriptions one socket may hold: each is a live binding the server evaluates on every event. */
const MAX_SUBSCRIPTIONS = 256

type Subscription = ReturnType<ReturnType<Store['on']>['subscribe']>

/** `log`: the server's log, where a 5xx answered in an error frame leaves its details. */
export function eventStream(
  service: { store: Store; tenancy: Tenancy },
  scope: Scope,
  maxBuffered: number,
  json: JsonLimits,
  log: (message: string) => void,
): WSEvents<WebSocket> {
  const subs = new Map<unknown, Subscription | undefined>()
  let closed = false
  return {
    onMessage: readInOrder<WSContext<WebSocket>>(
      json,
      (read, ws) => {
        // A frame still being read when the socket closed subscribes to nothing.
        if (closed) return
        const send = (m: unknown): boolean => sendJson(ws, m, maxBuffered)
        if ('refused' in read)
          return void send({ type: 'error', error: toWire(read.refused, log).body.error })
        const { msg } = read
        const error = (e: unknown): boolean =>
          send({ type: 'error', id: msg.id, error: toWire(e, log).body.error })
        switch (msg.type) {
          case 'ping':
            return void send({ type: 'pong', id: msg.id })
          case 'unsubscribe':
            subs.get(msg.id)?.unsubscribe()
            subs.delete(msg.id)
            return void send({ type: 'unsubscribed', id: msg.id })
          case 'subscribe': {
            const type = msg.trigger_type as TriggerType
            let config: EventConfig
            try {
              config = parseEventConfig(type, msg.config)
            } catch (e) {
              return void error(e)
            }
            if (!subs.has(msg.id) && subs.size >= MAX_SUBSCRIPTIONS)
              return void error(invalidRequest(`at most ${MAX_SUBSCRIPTIONS} subscriptions per socket`))
            subs.get(msg.id)?.unsubscribe()
            const metadata =
              scope.kind === 'all' ? config.metadata : service.tenancy.narrow(scope.owner, config.metadata)
            // A binding asking for another owner's sessions can never match: it stays silent.
            subs.set(
              msg.id,
              metadata === null
                ? undefined
                : service.store
                    .on(type, { ...config, metadata })
                    .subscribe((payload) => send({ type: 'event', id: msg.id, trigger_type: type, payload })),
            )
            return void send({ type: 'subscribed', id: msg.id })
          }
          default:
            return void error(invalidRequest('expected a subscribe, unsubscribe or ping message'))
        }
      },
      (e) => log(`events socket: ${String(e)}`),
    ),
    onClose() {
      closed = true
      for (const s of subs.values()) s?.unsubscribe()
      subs.clear()
    },
  }
}
