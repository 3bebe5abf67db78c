/** Error codes exactly as the contract names them (section 3). */
export type SessionErrorCode =
  | 'session/not_found'
  | 'session/entry_not_found'
  | 'session/parent_not_found'
  | 'session/invalid_entry_kind'
  | 'session/details_not_supported'
  | 'session/empty_batch'
  | 'session/invalid_cursor'
  | 'session/invalid_request'
  | 'session/attachment_too_large'
  | 'session/attachment_in_use'
  | 'session/storage'

/** Every failure a caller can see. `message` is the wire form `"<code>: <text>"`. */
export class SessionError extends Error {
  readonly code: SessionErrorCode
  constructor(code: SessionErrorCode, text: string, options?: { cause?: unknown }) {
    super(`${code}: ${text}`, options)
    this.name = 'SessionError'
    this.code = code
  }

  /** Rebuilds an error from its wire string (transports carry only the message). */
  static fromWire(message: string, fallback: SessionErrorCode = 'session/storage'): SessionError {
    const match = /^(session\/[a-z_]+): ?(.*)$/s.exec(message)
    return match ? new SessionError(match[1] as SessionErrorCode, match[2]) : new SessionError(fallback, message)
  }
}

export const invalid = (text: string): SessionError => new SessionError('session/invalid_request', text)

/**
 * A write the storage refused, as the caller sees it (`what`: "write failed", "import failed").
 * The transaction was aborted whole, so nothing of it was written. A full quota gets its own
 * reason, so an app can say so and offer to free space (`store.storage$` shows usage and quota).
 */
export function storageFailure(what: string, cause: unknown): SessionError {
  if (cause instanceof SessionError && cause.code === 'session/storage') return cause
  // By name: a DOMException in most engines, a QuotaExceededError class of its own in newer ones.
  if (cause instanceof Error && cause.name === 'QuotaExceededError') {
    const detail = cause.message ? `${cause.name}: ${cause.message}` : cause.name
    return new SessionError('session/storage', `quota exceeded: the browser has no more room for this site's data; nothing of this write was kept (${detail})`, { cause })
  }
  return new SessionError('session/storage', `${what}: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`, { cause })
}
