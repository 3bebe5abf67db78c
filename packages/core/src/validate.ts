import { invalid } from './errors.js'
import { LIMITS, checkBoundedString, checkDepth } from './limits.js'
import type { FunctionId, FunctionMap, Json, JsonObject } from './model.js'

/**
 * Request parsing against the seed's schemas. A parser checks a value and returns a normalized,
 * frozen copy: absent and `null` optionals are dropped (the seed omits empty fields on output),
 * defaults are filled (`details: null`, `is_error: false`, `arguments: null`), unknown extra keys
 * are ignored, and nothing the caller keeps a reference to can later change what was stored.
 */
export type Parser<T> = (value: unknown, path: string) => T

const describe = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'string' ? `string ${JSON.stringify(v.slice(0, 40))}` : typeof v === 'object' ? 'object' : `${typeof v} ${String(v)}`

const fail = (path: string, expected: string, value: unknown): never => {
  throw invalid(`${path || 'request'}: expected ${expected}, got ${describe(value)}`)
}
const at = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key

export const str: Parser<string> = (v, p) => (typeof v === 'string' ? v : fail(p, 'a string', v))
export const bool: Parser<boolean> = (v, p) => (typeof v === 'boolean' ? v : fail(p, 'a boolean', v))
export const int: Parser<number> = (v, p) => (Number.isSafeInteger(v) ? (v as number) : fail(p, 'an integer', v))
export const uint: Parser<number> = (v, p) => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fail(p, 'a non-negative integer', v))
export const num: Parser<number> = (v, p) => (typeof v === 'number' && Number.isFinite(v) ? v : fail(p, 'a finite number', v))

/** An id (session, entry, parent, attachment, function call): well-formed, at most `LIMITS.idBytes`. */
export const id: Parser<string> = (v, p) => checkBoundedString(str(v, p), LIMITS.idBytes, p, 'an id')
/** A name (custom type, function id, mime, model…): well-formed, at most `LIMITS.nameBytes`. */
export const name: Parser<string> = (v, p) => checkBoundedString(str(v, p), LIMITS.nameBytes, p, 'a name')

/**
 * A parser that first refuses values nested deeper than `LIMITS.depth` (an iterative walk), so
 * the recursive parsers under it never run out of stack. Every entry point from outside wears it.
 */
export const bounded = <T>(parser: Parser<T>): Parser<T> => (v, p) => {
  checkDepth(v, p)
  return parser(v, p)
}

export const oneOf = <T extends string>(values: readonly T[]): Parser<T> => (v, p) =>
  typeof v === 'string' && (values as readonly string[]).includes(v) ? (v as T) : fail(p, `one of ${values.join(', ')}`, v)

export const array = <T>(item: Parser<T>): Parser<T[]> => {
  // Item paths under the last parent path seen (see `object`).
  let parent: string | undefined
  let paths: string[] = []
  return (v, p) => {
    if (!Array.isArray(v)) return fail(p, 'an array', v)
    if (p !== parent) {
      parent = p
      paths = []
    }
    return Object.freeze(v.map((x, i) => item(x, (paths[i] ??= at(p, i))))) as T[]
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** Any JSON value, deep-copied and frozen; functions, NaN, class instances and the like are refused. */
export const json: Parser<Json> = (v, p) => {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v
  if (typeof v === 'number') return Number.isFinite(v) ? v : fail(p, 'a JSON value', v)
  if (Array.isArray(v)) {
    if (v.length > LIMITS.members) return fail(p, `at most ${LIMITS.members} items`, v)
    return Object.freeze(v.map((x, i) => json(x, at(p, i)))) as Json[]
  }
  if (isPlainObject(v)) {
    const out: JsonObject = {}
    const keys = Object.keys(v)
    if (keys.length > LIMITS.members) return fail(p, `at most ${LIMITS.members} keys`, v)
    // defineProperty, not assignment: a key named "__proto__" (ordinary data after JSON.parse)
    // must stay a key, not replace the copy's prototype. Keys are names (metadata keys among them).
    for (const k of keys) {
      checkBoundedString(k, LIMITS.nameBytes, p || 'request', 'a key')
      if (v[k] !== undefined) Object.defineProperty(out, k, { value: json(v[k], at(p, k)), enumerable: true, writable: true, configurable: true })
    }
    return Object.freeze(out)
  }
  return fail(p, 'a JSON value', v)
}
export const jsonObject: Parser<JsonObject> = (v, p) => (isPlainObject(v) ? (json(v, p) as JsonObject) : fail(p, 'an object', v))

export interface Field { p: Parser<unknown>; req?: boolean; def?: Json }
export const req = (p: Parser<unknown>): Field => ({ p, req: true })
export const opt = (p: Parser<unknown>, def?: Json): Field => ({ p, def })

export const object = <T>(fields: Record<string, Field>): Parser<T> => {
  const keys = Object.keys(fields)
  const list = keys.map((k) => fields[k])
  // The fields' paths under the last parent path seen: a schema mostly meets its values at one
  // place (`message.content[0]`), and building the paths for every value cost more than the checks.
  let parent: string | undefined
  let paths: string[] = []
  return (v, p) => {
    if (!isPlainObject(v)) return fail(p, 'an object', v)
    if (p !== parent) {
      parent = p
      paths = keys.map((k) => at(p, k))
    }
    const out: Record<string, unknown> = {}
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]
      const f = list[i]
      const value = v[key]
      if (value === undefined || value === null) {
        if (f.req) throw invalid(`${paths[i]}: missing required field`)
        if (f.def !== undefined) out[key] = f.def
      } else out[key] = f.p(value, paths[i])
    }
    return Object.freeze(out) as T
  }
}

export const tagged = <T>(tag: string, variants: Record<string, Parser<T>>): Parser<T> => (v, p) => {
  if (!isPlainObject(v)) return fail(p, 'an object', v)
  const t = v[tag]
  if (t === undefined || t === null) throw invalid(`${at(p, tag)}: missing required field`)
  const variant = typeof t === 'string' && Object.prototype.hasOwnProperty.call(variants, t) ? variants[t] : undefined
  return variant ? variant(v, p) : fail(at(p, tag), `one of ${Object.keys(variants).join(', ')}`, t)
}

export const lit = (value: string): Field => req(oneOf([value]))

/** A `Blob` or `File` handed over in process (never on the wire). */
export const blob: Parser<Blob> = (v, p) => (typeof Blob !== 'undefined' && v instanceof Blob ? v : fail(p, 'a Blob', v))

export type RequestParsers = { [K in FunctionId]?: Parser<FunctionMap[K][0]> }

/** Parses a request with its function's schema, after the depth bound (nothing deeper is walked). */
export function parseWith<T>(parser: Parser<T>, request: unknown): T {
  const value = request ?? {}
  checkDepth(value, '')
  return parser(value, '')
}
