/**
 * Session ids are chosen by callers (`ensure`), so they are encoded before they become file
 * names: bytes in `[A-Za-z0-9._-]` pass through, every other UTF-8 byte becomes `%XX` (uppercase
 * hex). `/`, `\`, NUL and `..`-tricks can therefore never leave the data directory. This is the
 * seed's fs adapter encoding, so both read each other's directories.
 */
const SAFE = /^[A-Za-z0-9._-]$/
export const SESSION_SUFFIX = '.jsonl'

export function encodeId(id: string): string {
  let out = ''
  for (const byte of new TextEncoder().encode(id)) {
    const ch = String.fromCharCode(byte)
    out += SAFE.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** The id an encoded name stands for, or undefined when the name is not a canonical encoding. */
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

export const sessionFileName = (id: string): string => encodeId(id) + SESSION_SUFFIX

/** The session id of a directory entry, or undefined for anything that is not a session file. */
export function sessionIdOfFile(name: string): string | undefined {
  return name.endsWith(SESSION_SUFFIX) ? decodeId(name.slice(0, -SESSION_SUFFIX.length)) : undefined
}
