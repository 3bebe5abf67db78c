import { SessionError, type SessionErrorCode } from '@colloquy/core'

/** An error the transport answers with: an HTTP status and the wire body `{ error: { code, message } }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    text: string,
    /** Response headers the answer carries (`Retry-After`, `WWW-Authenticate`, `Connection: close`). */
    readonly headers?: Readonly<Record<string, string>>,
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
}

export const invalidRequest = (text: string): HttpError => new HttpError(400, 'session/invalid_request', text)
export const tooLarge = (text: string, headers?: Record<string, string>): HttpError => new HttpError(413, 'session/invalid_request', text, headers)

/** Status and wire body for anything a handler threw; unknown failures are 500 and say little. */
export function toWire(error: unknown): { status: number; body: { error: { code: string; message: string } } } {
  if (error instanceof HttpError) return { status: error.status, body: { error: { code: error.code, message: error.message } } }
  if (error instanceof SessionError) return { status: STATUS[error.code] ?? 500, body: { error: { code: error.code, message: error.message } } }
  return { status: 500, body: { error: { code: 'server/internal', message: 'server/internal: unexpected server error' } } }
}
