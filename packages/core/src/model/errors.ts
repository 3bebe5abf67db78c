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
  // Encryption (docs/encryption.md), beyond the contract's list: a passphrase or key that does
  // not open a keyring, and a sealed value that does not open where it claims to belong
  // (tampered, swapped, replayed under another revision, or sealed under a key not held).
  | 'session/wrong_passphrase'
  | 'session/integrity'
  // An encrypted store that is locked (its keys dropped): nothing is read or written until it is
  // unlocked again.
  | 'session/locked'

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
    return match
      ? new SessionError(match[1] as SessionErrorCode, match[2])
      : new SessionError(fallback, message)
  }
}

export const invalid = (text: string): SessionError => new SessionError('session/invalid_request', text)
