import type { ImportContext } from '../import/context.js'
import { FormatError } from '../errors.js'
import { lineBatches, readText, type Source } from './source.js'
import { isObj, type Obj } from '../values.js'

/** A whole-document format's text as JSON, or a clear error saying where it broke. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new FormatError('format/invalid', `not valid JSON (${(e as Error).message})`)
  }
}

const HEAD = 64 * 1024

/**
 * Whether a source is JSON lines: its first line is a whole JSON object. The head is bytes
 * while the text decoded from it is shorter (UTF-8), so whether the head holds the whole input
 * is judged on what `head` returned, never on the decoded length. A first line longer than the
 * head is taken as a record: lines parse a one-line document too, while a pretty-printed one
 * has a line break within its first bytes.
 */
async function startsWithRecordLine(source: Source): Promise<boolean> {
  const head = await source.head(HEAD)
  const whole = (typeof head === 'string' ? head.length : head.byteLength) < HEAD
  const text = (typeof head === 'string' ? head : new TextDecoder().decode(head))
    .replace(/^\uFEFF/, '')
    .trimStart()
  if (text[0] !== '{') return false
  const nl = text.indexOf('\n')
  if (nl === -1 && !whole) return true
  try {
    return isObj(JSON.parse(nl === -1 ? text : text.slice(0, nl)))
  } catch {
    return false
  }
}

/**
 * Calls `each` with every top-level JSON object of a source that is either one (pretty or
 * minified) JSON document or JSON lines. A first line that is a whole object means lines
 * (streamed, bounded memory); otherwise the document is parsed whole.
 */
export async function eachRecord(
  source: Source,
  ctx: ImportContext,
  each: (o: Obj, line: number) => void,
): Promise<void> {
  if (!(await startsWithRecordLine(source))) {
    const doc = parseJson(await readText(source, ctx.options))
    if (Array.isArray(doc)) doc.forEach((d, i) => (isObj(d) ? each(d, i + 1) : undefined))
    else if (isObj(doc)) each(doc, 1)
    else throw new FormatError('format/invalid', 'expected a JSON object')
    return
  }
  await eachJsonLine(source, ctx, each)
}

/**
 * Calls `each` with every line of a JSON lines source that holds a JSON object, and its number
 * (from 1). Blank lines are passed over; a line that is not JSON, or not an object, is skipped
 * with a `bad-line` warning.
 */
export async function eachJsonLine(
  source: Source,
  ctx: ImportContext,
  each: (o: Obj, line: number) => void,
): Promise<void> {
  for await (const batch of lineBatches(source, ctx.options)) {
    batch.lines.forEach((line, i) => {
      const n = batch.first + i
      if (!line.trim()) return
      let o: unknown
      try {
        o = JSON.parse(line)
      } catch {
        return ctx.warnings.add('bad-line', `line ${n} is not valid JSON (truncated or corrupted); skipped`, {
          line: n,
        })
      }
      if (isObj(o)) each(o, n)
      else ctx.warnings.add('bad-line', `line ${n} is not a JSON object; skipped`, { line: n })
    })
  }
}
