import { Observable } from 'rxjs'
import { SessionError, type EventConfig, type EventMap, type TriggerType } from '@colloquy/core'
import { WebSocket } from '../../packages/server/test/ws.js'
import type { ConformanceClient } from './client.js'

export interface HttpClientOptions {
  /** The suite's clock: its value is sent to a test-mode server before each call that follows a change. */
  now?: () => number
  token?: string
}

/** A non-2xx answer as an error carrying the wire code (`session/…` codes become SessionError). */
export async function failure(res: Response): Promise<Error> {
  const body = (await res.json().catch(() => undefined)) as
    { error?: { code?: string; message?: string } } | undefined
  const code = body?.error?.code ?? `http/${res.status}`
  const message = body?.error?.message ?? `${code}: HTTP ${res.status}`
  return code.startsWith('session/')
    ? SessionError.fromWire(message)
    : Object.assign(new Error(message), { code, status: res.status })
}

export async function postJson(url: string, body: unknown, token?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  })
}

/**
 * Opens a WebSocket and resolves once it is open (rejects on an HTTP refusal). `onMessage` is
 * attached before the handshake: frames that arrive with the upgrade are emitted right after
 * `open`, before any later listener could be added.
 */
export function openSocket(
  url: string,
  token?: string,
  onMessage?: (data: Buffer) => void,
): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  if (onMessage) ws.on('message', (data) => onMessage(data as Buffer))
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws))
    ws.once('unexpected-response', (_req, res) =>
      reject(
        Object.assign(new Error(`WebSocket refused: HTTP ${res.statusCode}`), { status: res.statusCode }),
      ),
    )
    ws.once('error', reject)
  })
}

/**
 * The conformance client over a real server: calls are `POST /rpc/<function>`, `on()` is a
 * subscription on the `/events` WebSocket. A call first waits for pending subscriptions to be
 * acknowledged (the binding must exist before the operation runs), and `settle()` is a ping whose
 * pong arrives after every event the server sent before it.
 */
export async function httpClient(base: string, options: HttpClientOptions = {}): Promise<ConformanceClient> {
  const ws = await openSocket(`${base.replace(/^http/, 'ws')}/events`, options.token)
  const handlers = new Map<number, { next(p: unknown): void; error(e: Error): void }>()
  const waiting = new Map<number, () => void>()
  let nextId = 0
  let pending: Promise<unknown>[] = []
  let clock = options.now?.()

  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as {
      type: string
      id: number
      payload?: unknown
      error?: { message: string }
    }
    if (msg.type === 'event') handlers.get(msg.id)?.next(msg.payload)
    else if (msg.type === 'error') {
      handlers.get(msg.id)?.error(SessionError.fromWire(msg.error!.message))
      waiting.get(msg.id)?.()
    } else if (msg.type === 'subscribed' || msg.type === 'pong') waiting.get(msg.id)?.()
  })
  const request = (message: Record<string, unknown>): Promise<void> => {
    const id = ++nextId
    const done = new Promise<void>((resolve) => waiting.set(id, () => (waiting.delete(id), resolve())))
    ws.send(JSON.stringify({ ...message, id }))
    return done
  }

  return {
    async call(fn, req) {
      await Promise.all(pending)
      pending = []
      const now = options.now?.()
      if (now !== clock) {
        const res = await postJson(`${base}/test/clock`, { now }, options.token)
        if (!res.ok) throw await failure(res)
        clock = now
      }
      const res = await postJson(`${base}/rpc/${fn}`, req ?? {}, options.token)
      if (!res.ok) throw await failure(res)
      return res.json()
    },
    on<T extends TriggerType>(type: T, config?: EventConfig | null): Observable<EventMap[T]> {
      return new Observable<EventMap[T]>((subscriber) => {
        const id = nextId + 1
        handlers.set(id, {
          next: (p) => subscriber.next(p as EventMap[T]),
          error: (e) => subscriber.error(e),
        })
        pending.push(request({ type: 'subscribe', trigger_type: type, config }))
        return () => {
          handlers.delete(id)
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'unsubscribe', id }))
        }
      })
    },
    async settle() {
      await Promise.all(pending)
      pending = []
      await request({ type: 'ping' })
    },
    async close() {
      ws.close()
    },
  }
}
