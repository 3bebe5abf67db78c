import { invalidRequest } from '../errors.js'
import { nextTurn, WORK_BUDGETS } from '../work.js'
import { parseInPieces } from './json-pieces.js'

/** Shape limits every JSON body and WebSocket message is held to before it is parsed. */
export interface JsonLimits {
  /** Deepest nesting of arrays and objects (the top-level value is depth 1). */
  maxDepth: number
  /** Most elements in one array. */
  maxArrayLength: number
  /** Most keys in one object. */
  maxObjectKeys: number
  /** Longest string (key or value), in characters as sent (an escape sequence counts whole). */
  maxStringLength: number
}

export const DEFAULT_JSON_LIMITS: JsonLimits = {
  maxDepth: 64,
  maxArrayLength: 100_000,
  maxObjectKeys: 10_000,
  maxStringLength: 1024 * 1024,
}

/** Levels of a path shown in an error (a path 64 levels deep says no more than its start). */
const SHOWN_LEVELS = 8
/** Characters of one key shown in an error (keys are the sender's, possibly huge). */
const SHOWN_KEY = 40

/**
 * Scans the shape of a JSON text in one linear pass without recursion, so `JSON.parse` and every
 * recursive validator after it only ever see bounded input (a body nested 100,000 deep used to
 * overflow the stack). Only counts and the current key of each open object are kept: open
 * containers form a stack bounded by `maxDepth`. A violation names where it is, as the core's
 * validators name fields (`metadata.k[0][0]…`). The text need not be valid JSON here;
 * `JSON.parse` decides that afterwards.
 */
function shapeScanner(
  text: string,
  limits: JsonLimits,
): { readonly length: number; scan(until: number): number } {
  // Per open container: 1 for an object, 0 for an array; its commas so far; for an object, where
  // its current key's raw text (between the quotes) starts and ends, and whether the next string
  // is a key. Positions, not slices: the key's text is only needed to name a violation.
  const kinds: number[] = []
  const counts: number[] = []
  const keyStart: number[] = []
  const keyEnd: number[] = []
  const keyNext: boolean[] = []
  /** The path of the value being read, or with `levels`, of one of its containers. */
  const where = (levels = kinds.length): string => {
    let path = ''
    for (let l = 0; l < Math.min(levels, SHOWN_LEVELS); l++) {
      if (kinds[l] === 0) path += `[${counts[l]}]`
      else {
        const raw = text.slice(keyStart[l], Math.min(keyEnd[l], keyStart[l] + SHOWN_KEY + 1))
        const key = raw.length > SHOWN_KEY ? `${raw.slice(0, SHOWN_KEY)}…` : raw
        path += path ? `.${key}` : key
      }
    }
    return levels > SHOWN_LEVELS ? `${path}…` : path || '(top level)'
  }
  const n = text.length
  let i = 0
  /** Scans on to `until` (past it when a string runs on), returns where it stopped. */
  const scan = (until: number): number => {
    const stop = Math.min(until, n)
    for (; i < stop; i++) {
      const c = text.charCodeAt(i)
      if (c === 0x22 /* " */) {
        // The closing quote is the next one not escaped by an odd run of backslashes (found with
        // the native indexOf: most of a body is string content).
        const start = i
        for (;;) {
          i = text.indexOf('"', i + 1)
          if (i < 0) {
            i = n
            break
          }
          let k = i - 1
          while (k > start && text.charCodeAt(k) === 0x5c /* \ */) k--
          if ((i - 1 - k) % 2 === 0) break
        }
        const top = kinds.length - 1
        const isKey = top >= 0 && kinds[top] === 1 && keyNext[top]
        if (isKey) {
          keyStart[top] = start + 1
          keyEnd[top] = i
          keyNext[top] = false
        }
        if (i - start - 1 > limits.maxStringLength)
          throw invalidRequest(
            `${where()}: JSON ${isKey ? 'key' : 'string'} longer than ${limits.maxStringLength} characters`,
          )
        continue
      }
      if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
        if (kinds.length >= limits.maxDepth)
          throw invalidRequest(`${where()}: JSON nested deeper than ${limits.maxDepth} levels`)
        kinds.push(c === 0x7b ? 1 : 0)
        counts.push(0)
        keyStart.push(0)
        keyEnd.push(0)
        keyNext.push(true)
        continue
      }
      if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
        kinds.pop()
        counts.pop()
        keyStart.pop()
        keyEnd.pop()
        keyNext.pop()
        continue
      }
      const top = kinds.length - 1
      if (c === 0x2c /* , */ && top >= 0) {
        const count = ++counts[top] + 1
        keyNext[top] = true
        if (kinds[top] === 0 && count > limits.maxArrayLength)
          throw invalidRequest(`${where(top)}: JSON array with more than ${limits.maxArrayLength} elements`)
        if (kinds[top] === 1 && count > limits.maxObjectKeys)
          throw invalidRequest(`${where(top)}: JSON object with more than ${limits.maxObjectKeys} keys`)
      }
    }
    return i
  }
  return { length: n, scan }
}

/**
 * Checks the shape of a JSON text in one linear pass without recursion (see `shapeScanner`): a
 * violation is a 400 `session/invalid_request` naming where it is.
 */
export function checkJsonShape(text: string, limits: JsonLimits): void {
  const s = shapeScanner(text, limits)
  s.scan(s.length)
}

/**
 * `checkJsonShape` in slices of `WORK_BUDGETS.sliceChars` characters, other requests served
 * between them (`nextTurn`): a body of megabytes is never one turn of the event loop.
 */
export async function checkJsonShapeInSlices(text: string, limits: JsonLimits): Promise<void> {
  const s = shapeScanner(text, limits)
  for (let at = s.scan(WORK_BUDGETS.sliceChars); at < s.length; at = s.scan(at + WORK_BUDGETS.sliceChars))
    await nextTurn()
}

/** `JSON.parse`, its failure a 400 `session/invalid_request`. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (e) {
    throw invalidRequest(`malformed JSON: ${(e as Error).message}`)
  }
}

/** The one JSON parser of the server: shape checked first (400 `session/invalid_request`), then parsed. */
export function parseJson(text: string, limits: JsonLimits): unknown {
  checkJsonShape(text, limits)
  return parsed(text)
}

/**
 * `parseJson` for a request body or a WebSocket message: a text longer than a slice has its
 * shape checked in slices (`checkJsonShapeInSlices`), then is parsed in pieces of about a slice
 * (`parseInPieces`: V8's `JSON.parse` cannot be resumed, but a container's members can each be
 * given to it), other requests served between them.
 */
export async function parseJsonInSlices(text: string, limits: JsonLimits): Promise<unknown> {
  if (text.length <= WORK_BUDGETS.sliceChars) return parseJson(text, limits)
  await checkJsonShapeInSlices(text, limits)
  return parseInPieces(text, WORK_BUDGETS.sliceChars, nextTurn)
}
