import type { WSContext } from 'hono/ws'
import type { WebSocket } from 'ws'

/** Close code for a consumer that reads slower than the server writes (RFC 6455 "try again later"). */
export const SLOW_CONSUMER = 1013

/**
 * Sends one JSON message. A client that lets more than `maxBuffered` bytes pile up is
 * disconnected instead of growing the server's memory: it reconnects and pulls from its checkpoint.
 */
export function sendJson(ws: WSContext<WebSocket>, value: unknown, maxBuffered: number): boolean {
  if (ws.readyState !== 1) return false
  if ((ws.raw?.bufferedAmount ?? 0) > maxBuffered) {
    ws.close(SLOW_CONSUMER, 'slow consumer: reconnect and pull')
    return false
  }
  ws.send(JSON.stringify(value))
  return true
}

/** A text frame as a JSON object, or undefined. */
export function parseMessage(data: unknown): Record<string, unknown> | undefined {
  if (typeof data !== 'string') return undefined
  try {
    const v: unknown = JSON.parse(data)
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
