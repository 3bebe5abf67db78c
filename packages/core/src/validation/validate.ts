import { invalid } from '../model/errors.js'
import { LIMITS, checkBoundedString } from './limits.js'
import type { Json, JsonObject } from '../model/model.js'

/**
 * Request parsing against the seed's schemas. A parser checks a value and returns a normalized,
 * frozen copy: absent and `null` optionals are dropped (the seed omits empty fields on output),
 * defaults are filled (`details: null`, `is_error: false`, `arguments: null`), unknown extra keys
 * are ignored, and nothing the caller keeps a reference to can later change what was stored.
 * The parsers of objects, tagged unions, numbers, names and blobs are in `record-parsers.ts`.
 */
export type Parser<T> = (value: unknown, path: string) => T

const describe = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'array'
      : typeof v === 'string'
        ? `string ${JSON.stringify(v.slice(0, 40))}`
        : typeof v === 'object'
          ? 'object'
          : `${typeof v} ${String(v)}`

export const fail = (path: string, expected: string, value: unknown): never => {
  throw invalid(`${path || 'request'}: expected ${expected}, got ${describe(value)}`)
}
export const at = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key

export const str: Parser<string> = (v, p) => (typeof v === 'string' ? v : fail(p, 'a string', v))

/** An id (session, entry, parent, attachment, function call): well-formed, at most `LIMITS.idBytes`. */
export const id: Parser<string> = (v, p) => checkBoundedString(str(v, p), LIMITS.idBytes, p, 'an id')

export const oneOf =
  <T extends string>(values: readonly T[]): Parser<T> =>
  (v, p) =>
    typeof v === 'string' && (values as readonly string[]).includes(v)
      ? (v as T)
      : fail(p, `one of ${values.join(', ')}`, v)

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
    // This call's own list: an item of the same schema nested inside replaces `paths`.
    const here = paths
    return Object.freeze(v.map((x, i) => item(x, (here[i] ??= at(p, i))))) as T[]
  }
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => {
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
      if (v[k] !== undefined)
        Object.defineProperty(out, k, {
          value: json(v[k], at(p, k)),
          enumerable: true,
          writable: true,
          configurable: true,
        })
    }
    return Object.freeze(out)
  }
  return fail(p, 'a JSON value', v)
}
export const jsonObject: Parser<JsonObject> = (v, p) =>
  isPlainObject(v) ? (json(v, p) as JsonObject) : fail(p, 'an object', v)
