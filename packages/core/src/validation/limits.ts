import { invalid } from '../model/errors.js'

/**
 * Bounds on what a request may hold, checked by the one validator the browser store and the
 * server share (see the README's "Limits"). Each is far above what a chat app produces and far
 * below what breaks a file system, an IndexedDB key, a log line or the call stack.
 */
export const LIMITS = Object.freeze({
  /** Ids (session, entry, parent, cursor targets, attachments, function calls), in UTF-8 bytes. */
  idBytes: 255,
  /** Names (custom types, function ids, metadata and other JSON keys, mime, model, provider…), in UTF-8 bytes. */
  nameBytes: 255,
  /** Opaque paging cursors (base64 of a small JSON object that holds at most one id). */
  cursorBytes: 4096,
  /** Nesting of arrays and objects in one request, stored entry or meta, counted from its root. */
  depth: 64,
  /** Members of one array or object inside a free-form JSON value (metadata, arguments, details…). */
  members: 100_000,
})

// String.prototype.isWellFormed (ES2024) where the runtime has it, a scan for lone surrogates elsewhere.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const native = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed

/** True when the string holds no lone surrogate: it has exactly one UTF-8 encoding. */
export function isWellFormed(s: string): boolean {
  return native ? native.call(s) : !LONE_SURROGATE.test(s)
}

/** The string's UTF-8 length (a well-formed string's; a lone surrogate counts as 3). */
export function utf8Bytes(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    // A surrogate pair is 4 bytes: 2 for each half.
    n += c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3
  }
  return n
}

/** Checks a string against a byte bound: well-formed Unicode, at most `max` UTF-8 bytes. */
export function checkBoundedString(s: string, max: number, path: string, what: string): string {
  if (!isWellFormed(s))
    throw invalid(`${path}: ${what} must be well-formed Unicode (it holds a lone surrogate)`)
  // Every UTF-16 code unit is at most 3 UTF-8 bytes: short strings need no count.
  if (s.length * 3 > max && utf8Bytes(s) > max)
    throw invalid(`${path}: ${what} is longer than ${max} UTF-8 bytes`)
  return s
}

/** True for a string the validator accepts as an id (for stored data checked outside a parser). */
export const isValidId = (s: unknown): s is string =>
  typeof s === 'string' && isWellFormed(s) && utf8Bytes(s) <= LIMITS.idBytes

interface Frame {
  value: unknown
  depth: number
  parent: Frame | undefined
  key: string | number
}

const pathOf = (root: string, f: Frame): string => {
  const keys: Array<string | number> = []
  for (let x: Frame | undefined = f; x && x.parent; x = x.parent) keys.push(x.key)
  let out = root
  for (let k of keys.reverse()) {
    // The depth check runs before keys are checked: a hostile key is shortened in the message.
    if (typeof k === 'string' && k.length > 40) k = `${k.slice(0, 40)}…`
    out = typeof k === 'number' ? `${out}[${k}]` : out ? `${out}.${k}` : k
  }
  return out
}

/**
 * Refuses a value nested deeper than `LIMITS.depth` before any recursive parser sees it: the
 * walk is iterative, so a body nested 100,000 arrays deep costs a loop, not the call stack. A
 * cyclic object (possible from in-process callers) is refused the same way.
 */
export function checkDepth(value: unknown, path: string, max = LIMITS.depth): void {
  if (typeof value !== 'object' || value === null) return
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: '' }]
  while (stack.length) {
    const f = stack.pop()!
    if (f.depth > max) throw invalid(`${pathOf(path, f) || 'request'}: nested deeper than ${max} levels`)
    // Bytes (an encrypted entry's box at rest) nest nothing: their indices are not walked.
    if (f.value instanceof ArrayBuffer || ArrayBuffer.isView(f.value)) continue
    const v = f.value as Record<string, unknown> | unknown[]
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x = v[i]
        if (typeof x === 'object' && x !== null)
          stack.push({ value: x, depth: f.depth + 1, parent: f, key: i })
      }
    } else {
      for (const k in v) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue
        const x = (v as Record<string, unknown>)[k]
        if (typeof x === 'object' && x !== null)
          stack.push({ value: x, depth: f.depth + 1, parent: f, key: k })
      }
    }
  }
}
