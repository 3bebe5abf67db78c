import { createHash } from 'node:crypto'

export const SESSION_SUFFIX = '.jsonl'

/**
 * The one name the file storage derives from anything a client chose (a session id, an
 * attachment id) or from a name found on disk (a file moved aside): `<slug>+<sha256 of the
 * string's UTF-8, lowercase hex>`. Every path segment the storage builds from input is this,
 * plus a fixed suffix (see `NAME_GRAMMAR` in the tests, which enumerate every path the storage
 * touches).
 *
 * Why a hash and not an escaping of the id: two different ids must never share a name whatever
 * the file system folds or limits. A name of lowercase ASCII letters, digits, `-` and one `+`
 * is left alone by case-insensitive file systems (macOS, Windows: `Chat-A` and `chat-a` hash
 * apart), by Unicode normalization (NFC and NFD forms of `é` are different bytes, so different
 * hashes, and the name holds no non-ASCII to normalize), never ends in a dot or a space, is never
 * a reserved Windows name (the part before the first dot always holds `+` and 64 hex digits, so
 * `CON`, `aux.txt`, `COM1` are not), and is at most 97 bytes whatever the input's length (file
 * systems allow 255, which leaves room for every suffix and temporary name). The slug (the
 * first 32 characters, lowercased, anything outside `[a-z0-9]` as `-`) only helps a person find
 * a file; the hash alone tells names apart.
 *
 * The `+` also tells these names from the percent-encoded ones earlier versions wrote (which
 * escape `+`), so a data directory of those is migrated on open (`legacyIdOfFile`,
 * `migrateAttachmentFolders`).
 */
export function boundedName(key: string): string {
  const slug = key
    .slice(0, 32)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '-')
  return `${slug}+${createHash('sha256').update(key, 'utf8').digest('hex')}`
}

/** A `boundedName` and nothing else. */
export const BOUNDED_NAME = /^[a-z0-9-]{0,32}\+[0-9a-f]{64}$/

/** A session's file name: `boundedName(id).jsonl`, the original id kept inside the file (its meta records), where loading checks it. */
export const sessionFileName = (id: string): string => boundedName(id) + SESSION_SUFFIX

const CURRENT = /^[a-z0-9-]{0,32}\+[0-9a-f]{64}\.jsonl$/

/** True for a session file name of the current layout. */
export const isSessionFileName = (name: string): boolean => CURRENT.test(name)

/**
 * The names earlier versions wrote (the seed's fs adapter encoding): bytes in `[A-Za-z0-9._-]`
 * pass through, every other UTF-8 byte becomes `%XX`. Injective on byte strings, but not on
 * case-folding or normalizing file systems, and a lone surrogate was encoded as U+FFFD, so two
 * ids shared one file. Kept only to read old directories and journals.
 */
const SAFE = /^[A-Za-z0-9._-]$/

export function encodeId(id: string): string {
  let out = ''
  for (const byte of new TextEncoder().encode(id)) {
    const ch = String.fromCharCode(byte)
    out += SAFE.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** The id a percent-encoded name stands for, or undefined when the name is not a canonical encoding. */
export function decodeId(encoded: string): string | undefined {
  const bytes: number[] = []
  for (let i = 0; i < encoded.length; i++) {
    const ch = encoded[i]
    if (ch === '%') {
      const hex = encoded.slice(i + 1, i + 3)
      if (!/^[0-9A-F]{2}$/.test(hex)) return undefined
      bytes.push(parseInt(hex, 16))
      i += 2
    } else if (SAFE.test(ch)) bytes.push(ch.charCodeAt(0))
    else return undefined
  }
  let id: string
  try {
    id = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes))
  } catch {
    return undefined
  }
  // Only the canonical spelling maps back, so one id never has two files.
  return id !== '' && encodeId(id) === encoded ? id : undefined
}

/** The session id of a file name written by an earlier version, or undefined. */
export function legacyIdOfFile(name: string): string | undefined {
  return name.endsWith(SESSION_SUFFIX) && !isSessionFileName(name)
    ? decodeId(name.slice(0, -SESSION_SUFFIX.length))
    : undefined
}
