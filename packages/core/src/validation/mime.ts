import { invalid } from '../model/errors.js'

/** What an attachment whose type is missing, unknown or malformed is stored and served as. */
export const OCTET_STREAM = 'application/octet-stream'

/** Most UTF-8 bytes of a mime type (its parameters included); every accepted one is ASCII. */
export const MIME_MAX_BYTES = 255

// RFC 6838 section 4.2: type and subtype are restricted names (a letter or digit, then at most
// 126 of letters, digits and `!#$&^_.+-`). Parameters are RFC 9110's `;` token `=` (token or
// quoted string), with optional blanks around the `;`. Nothing else: no control character (a CR
// or LF would split a Content-Type header), no non-ASCII, no blank type, no `*` wildcards.
const RESTRICTED = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}'
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const QUOTED = '"(?:[\\t !#-\\[\\]-~]|\\\\[\\t !-~])*"'
const MIME = new RegExp(`^${RESTRICTED}/${RESTRICTED}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`)

/**
 * True for a well-formed media type (`type/subtype`, optional parameters) of at most
 * `MIME_MAX_BYTES`: the one rule every path that stores an attachment's type checks.
 */
export function isValidMime(value: unknown): value is string {
  // Every accepted character is ASCII, so the length in code units is the length in bytes.
  return typeof value === 'string' && value.length <= MIME_MAX_BYTES && MIME.test(value)
}

/** The mime as given, or `invalid_request` saying why not (`path` names the field). */
export function checkMime(value: string, path: string): string {
  if (!isValidMime(value)) {
    throw invalid(
      `${path}: expected a media type \`type/subtype\` (RFC 6838, optional \`; name=value\` parameters, no control characters, at most ${MIME_MAX_BYTES} bytes)`,
    )
  }
  return value
}

/**
 * The type to serve or import a possibly bad mime as: a stored one written before the check, or
 * one an importer read from a foreign file, is `application/octet-stream` rather than an error.
 */
export const mimeOrOctet = (value: unknown): string => (isValidMime(value) ? value : OCTET_STREAM)
