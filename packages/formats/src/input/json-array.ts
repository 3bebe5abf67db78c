import type { ImportContext } from '../import/context.js'
import { FormatError } from '../errors.js'
import { textChunks, type Source } from './source.js'

/**
 * Calls `each` with every element of a JSON document that is one top-level array, parsing one
 * element at a time as the text streams in: a chat app's export of thousands of conversations
 * never has to be one string, nor one parsed tree, in memory. Elements that are not objects or
 * arrays are passed as `undefined` (the caller counts them as junk).
 */
export async function eachArrayElement(
  source: Source,
  ctx: ImportContext,
  each: (value: unknown, index: number) => void,
): Promise<void> {
  let opened = false
  let closed = false
  let depth = 0
  let inString = false
  let escape = false
  /** Pieces of the element being read (it may span chunks); empty between elements. */
  let pieces: string[] = []
  let scalar = false
  let index = 0
  const emit = (text: string): void => {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      throw new FormatError(
        'format/invalid',
        `element ${index + 1} of the export is not valid JSON (${(e as Error).message})`,
      )
    }
    each(value, index++)
  }
  for await (const chunk of textChunks(source, ctx.options)) {
    let start = pieces.length ? 0 : -1
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i)
      if (inString) {
        if (escape) escape = false
        else if (c === 92) escape = true
        else if (c === 34) inString = false
        continue
      }
      if (c === 32 || c === 10 || c === 13 || c === 9) continue
      if (closed) throw new FormatError('format/invalid', "text after the end of the export's array")
      if (!opened) {
        if (c !== 91) throw new FormatError('format/invalid', 'the export is not a JSON array')
        opened = true
        depth = 1
        continue
      }
      if (c === 34) {
        inString = true
        if (depth === 1) {
          scalar = true
          start = -1
        }
      } else if (c === 123 || c === 91) {
        if (depth === 1) start = i
        depth++
      } else if (c === 125 || c === 93) {
        if (depth === 1 && c === 125)
          throw new FormatError('format/invalid', "the export's array is closed with a brace")
        depth--
        if (depth === 1) {
          pieces.push(chunk.slice(start, i + 1))
          emit(pieces.join(''))
          pieces = []
          start = -1
        } else if (depth === 0) {
          if (scalar) each(undefined, index++)
          scalar = false
          closed = true
        }
      } else if (c === 44 && depth === 1) {
        if (scalar) each(undefined, index++)
        scalar = false
      } else if (depth === 1) scalar = true
    }
    if (start !== -1) pieces.push(chunk.slice(start))
  }
  if (!closed)
    throw new FormatError(
      'format/invalid',
      opened ? 'the export ends before its array is closed (truncated?)' : 'the export is empty',
    )
}
