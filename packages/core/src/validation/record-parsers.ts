import type { Json } from '../model/model.js'
import { LIMITS, checkBoundedString, checkDepth } from './limits.js'
import { at, fail, isPlainObject, oneOf, str, type Parser } from './validate.js'
import { invalid } from '../model/errors.js'
import { mimeOrOctet } from './mime.js'

// The validator's parsers that only request, message and record schemas use: objects with
// declared fields, unions tagged by a field, numbers, booleans, names and blobs, and the entry
// points that bound a value's depth before parsing it (`bounded`, `parseWith`). Those schemas are
// fetched on first use; `validate.ts` holds what events' configs need at start (strings, ids,
// enums, arrays, JSON). Whatever a module the main entry reaches holds is in an app's first chunk
// (esbuild places code by the files an entry reaches, not by what it uses), hence two files.

export interface Field {
  p: Parser<unknown>
  req?: boolean
  def?: Json
}
export const req = (p: Parser<unknown>): Field => ({ p, req: true })
export const opt = (p: Parser<unknown>, def?: Json): Field => ({ p, def })

/** The fields of each `object` schema, by parser: what the server README's table of request bodies is checked against. */
const shapes = new WeakMap<Parser<unknown>, readonly { name: string; required: boolean }[]>()

/** The fields an `object` schema reads (undefined for any other parser). */
export const fieldsOf = (
  parser: Parser<unknown>,
): readonly { name: string; required: boolean }[] | undefined => shapes.get(parser)

export const object = <T>(fields: Record<string, Field>): Parser<T> => {
  const keys = Object.keys(fields)
  const list = keys.map((k) => fields[k])
  const parser = objectParser<T>(keys, list)
  shapes.set(
    parser,
    keys.map((name, i) => ({ name, required: list[i].req === true })),
  )
  return parser
}

const objectParser = <T>(keys: string[], list: Field[]): Parser<T> => {
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
    // This call's own list: a value of the same schema nested inside replaces `paths`.
    const here = paths
    const out: Record<string, unknown> = {}
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]
      const f = list[i]
      const value = v[key]
      if (value === undefined || value === null) {
        if (f.req) throw invalid(`${here[i]}: missing required field`)
        if (f.def !== undefined) out[key] = f.def
      } else out[key] = f.p(value, here[i])
    }
    return Object.freeze(out) as T
  }
}

export const tagged =
  <T>(tag: string, variants: Record<string, Parser<T>>): Parser<T> =>
  (v, p) => {
    if (!isPlainObject(v)) return fail(p, 'an object', v)
    const t = v[tag]
    if (t === undefined || t === null) throw invalid(`${at(p, tag)}: missing required field`)
    const variant =
      typeof t === 'string' && Object.prototype.hasOwnProperty.call(variants, t) ? variants[t] : undefined
    return variant ? variant(v, p) : fail(at(p, tag), `one of ${Object.keys(variants).join(', ')}`, t)
  }

export const lit = (value: string): Field => req(oneOf([value]))

export const bool: Parser<boolean> = (v, p) => (typeof v === 'boolean' ? v : fail(p, 'a boolean', v))
export const int: Parser<number> = (v, p) =>
  Number.isSafeInteger(v) ? (v as number) : fail(p, 'an integer', v)
export const uint: Parser<number> = (v, p) =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fail(p, 'a non-negative integer', v)
export const num: Parser<number> = (v, p) =>
  typeof v === 'number' && Number.isFinite(v) ? v : fail(p, 'a finite number', v)
/** A name (custom type, function id, mime, model…): well-formed, at most `LIMITS.nameBytes`. */
export const name: Parser<string> = (v, p) => checkBoundedString(str(v, p), LIMITS.nameBytes, p, 'a name')
/** A mime type read back from data written before the rule: a bad one reads as `application/octet-stream`. */
export const storedMime: Parser<string> = (v, p) => mimeOrOctet(str(v, p))
/** A `Blob` or `File` handed over in process (never on the wire). */
export const blob: Parser<Blob> = (v, p) =>
  typeof Blob !== 'undefined' && v instanceof Blob ? v : fail(p, 'a Blob', v)

/**
 * A parser that first refuses values nested deeper than `LIMITS.depth` (an iterative walk), so
 * the recursive parsers under it never run out of stack. Every entry point from outside wears it.
 */
export const bounded =
  <T>(parser: Parser<T>): Parser<T> =>
  (v, p) => {
    checkDepth(v, p)
    return parser(v, p)
  }

/** Parses a request with its function's schema, after the depth bound (nothing deeper is walked). */
export function parseWith<T>(parser: Parser<T>, request: unknown): T {
  const value = request ?? {}
  checkDepth(value, '')
  return parser(value, '')
}
