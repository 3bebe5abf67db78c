import { randomBytes } from 'node:crypto'
import { SessionError, type SessionErrorCode } from '@colloquy/core'

/** An error the transport answers with: an HTTP status and the wire body `{ error: { code, message } }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    text: string,
    /** Response headers the answer carries (`Retry-After`, `WWW-Authenticate`, `Connection: close`). */
    readonly headers?: Readonly<Record<string, string>>,
    /**
     * For a refusal that passes with time (429, 503): how long to wait, in ms. The answer carries
     * it as `retry_after_ms` beside `error` (as a WebSocket error frame does), more precise than
     * `Retry-After`'s whole seconds.
     */
    readonly retryAfterMs?: number,
  ) {
    super(`${code}: ${text}`)
    this.name = 'HttpError'
  }
}

/** HTTP statuses of the contract's codes (the protocol README lists them). */
const STATUS: Record<SessionErrorCode, number> = {
  'session/invalid_request': 400,
  'session/invalid_cursor': 400,
  'session/empty_batch': 400,
  'session/not_found': 404,
  'session/entry_not_found': 404,
  'session/parent_not_found': 409,
  'session/attachment_in_use': 409,
  'session/invalid_entry_kind': 422,
  'session/details_not_supported': 422,
  'session/attachment_too_large': 413,
  'session/storage': 503,
  // Raised by clients holding keys; a server never decrypts, these only travel through it.
  'session/wrong_passphrase': 422,
  'session/integrity': 422,
  'session/locked': 423,
}

export const invalidRequest = (text: string): HttpError => new HttpError(400, 'session/invalid_request', text)
export const tooLarge = (text: string, headers?: Record<string, string>): HttpError =>
  new HttpError(413, 'session/invalid_request', text, headers)

/** Where the details of a failure go when the caller names no log: the server's default log. */
/** The text of a failure for the log: its stack (or message), and its causes'. */
function details(error: unknown): string {
  const parts: string[] = []
  for (
    let e: unknown = error, depth = 0;
    e !== undefined && depth < 5;
    e = (e as { cause?: unknown } | null)?.cause, depth++
  ) {
    parts.push(e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e))
    if (!(e instanceof Error)) break
  }
  return parts.join('\ncaused by: ')
}

/**
 * Status and wire body for anything a handler threw. A 4xx carries its message: it says what
 * was wrong with the request, built from the request. A failure of the server itself (any 5xx:
 * a storage error, an unexpected exception) carries a fixed text and an id, never its message,
 * which may hold a server path, a stack or another tenant's data; its details go to `log` under
 * that id. This is the one place failures become answers (HTTP routes, WebSocket frames).
 */
export function toWire(
  error: unknown,
  log: (message: string) => void,
): {
  status: number
  body: { error: { code: string; message: string; id?: string }; retry_after_ms?: number }
} {
  const status =
    error instanceof HttpError
      ? error.status
      : error instanceof SessionError
        ? (STATUS[error.code] ?? 500)
        : 500
  const code = error instanceof HttpError || error instanceof SessionError ? error.code : 'server/internal'
  const wait = error instanceof HttpError ? error.retryAfterMs : undefined
  const after = wait === undefined ? {} : { retry_after_ms: wait }
  if (status < 500) return { status, body: { error: { code, message: (error as Error).message }, ...after } }
  const id = randomBytes(6).toString('hex')
  log(`error ${id} (${code}): ${details(error)}`)
  const what =
    code === 'session/storage' ? 'the storage could not complete the request' : 'unexpected server error'
  return {
    status,
    body: {
      error: { code, message: `${code}: ${what} (error ${id}, details in the server log)`, id },
      ...after,
    },
  }
}
