import type { Socket } from 'node:net'
import type { WSContext } from 'hono/ws'
import type { WebSocket } from 'ws'
import { HttpError, invalidRequest } from '../errors.js'
import { parseJsonInSlices, type JsonLimits } from './json-limits.js'

/** Close code for a consumer that reads slower than the server writes (RFC 6455 "try again later"). */
export const SLOW_CONSUMER = 1013

/** The TCP socket under each accepted WebSocket (recorded by the server when it connects). */
const sockets = new WeakMap<WebSocket, Socket>()
/** Sockets corked until the end of the current tick by `sendGathered`. */
const gathering = new Set<Socket>()
/** A gathered message past this size sends what was gathered first, and goes on its own. */
const GATHER_BYTES = 64 * 1024

export function trackSocket(ws: WebSocket, socket: Socket): void {
  sockets.set(ws, socket)
}

const release = (socket: Socket): void => {
  if (gathering.delete(socket)) socket.uncork()
}

/**
 * Sends one JSON message. A message that would take what the server holds unsent for this client
 * past `maxBuffered` bytes disconnects it instead (a lone message always goes, so a client that
 * reads is never cut off by one big page): it reconnects and pulls from its checkpoint.
 */
export function sendJson(
  ws: WSContext<WebSocket>,
  value: unknown,
  maxBuffered: number,
  gather = false,
): boolean {
  if (ws.readyState !== 1) return false
  const text = JSON.stringify(value)
  const socket = ws.raw && sockets.get(ws.raw)
  if (socket) {
    if (gather && text.length <= GATHER_BYTES) {
      if (!gathering.has(socket) && !socket.destroyed) {
        socket.cork()
        gathering.add(socket)
        process.nextTick(release, socket)
      }
    } else release(socket)
  }
  const buffered = ws.raw?.bufferedAmount ?? 0
  if (buffered > 0 && buffered + Buffer.byteLength(text) > maxBuffered) {
    ws.close(SLOW_CONSUMER, 'slow consumer: reconnect and pull')
    return false
  }
  ws.send(text)
  return true
}

/**
 * `sendJson`, gathered with what else this socket sends in the same tick into one write: the
 * echo of a commit's changes on the live stream and the answer to the push that made it leave
 * together, one system call instead of two.
 */
export function sendGathered(ws: WSContext<WebSocket>, value: unknown, maxBuffered: number): boolean {
  return sendJson(ws, value, maxBuffered, true)
}

/** What `readMessage` makes of a frame: a JSON object, or the reason it is refused. */
export type ReadMessage = { msg: Record<string, unknown> } | { refused: HttpError }

/**
 * A client message: a JSON object from a text frame, parsed with the server's limits (a large
 * one in slices, `parseJsonInSlices`: a 4 MiB frame is never one turn of the event loop), or the
 * reason it is refused.
 */
export async function readMessage(data: unknown, limits: JsonLimits): Promise<ReadMessage> {
  if (typeof data !== 'string')
    return { refused: invalidRequest('expected a text frame holding a JSON object') }
  try {
    const v = await parseJsonInSlices(data, limits)
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return { msg: v as Record<string, unknown> }
    return { refused: invalidRequest('expected a JSON object') }
  } catch (e) {
    return { refused: e instanceof HttpError ? e : invalidRequest(String(e)) }
  }
}

/**
 * A socket's `onMessage`: each frame read with `readMessage`, and handed to `handle` in the order
 * the frames came (a large frame parsed in slices does not let a later small one overtake it).
 * What `handle` throws goes to `failed`; the frames after it are still read.
 */
export function readInOrder<W>(
  limits: JsonLimits,
  handle: (read: ReadMessage, ws: W, data: unknown) => void,
  failed: (e: unknown) => void,
): (event: { data: unknown }, ws: W) => void {
  let reading = Promise.resolve()
  return (event, ws) => {
    const { data } = event
    reading = reading.then(async () => handle(await readMessage(data, limits), ws, data)).catch(failed)
  }
}
