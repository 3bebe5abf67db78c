/** Why an input could not be imported at all (as opposed to a warning about one part of it). */
export type FormatErrorCode =
  | 'format/unknown'
  | 'format/empty'
  | 'format/invalid'
  | 'format/too_large'
  | 'format/unsafe_archive'
  | 'format/unsupported'
  | 'format/exists'

/** A failed import or export. `message` is `"<code>: <text>"`, like core's `SessionError`. */
export class FormatError extends Error {
  readonly code: FormatErrorCode
  constructor(code: FormatErrorCode, text: string, options?: { cause?: unknown }) {
    super(`${code}: ${text}`, options)
    this.name = 'FormatError'
    this.code = code
  }
}
