import type { Token } from './tokenize.js'

export interface Snippet {
  readonly text: string
  /** `[start, end)` ranges in `text` (UTF-16 offsets) of the words the query matched. */
  readonly highlights: readonly (readonly [number, number])[]
}

/** Characters of text around the first match. */
export const SNIPPET_CHARS = 160
const LEAD = 40
const ELLIPSIS = '…'

/** Steps back to a code point boundary (never splits a surrogate pair). */
const boundary = (text: string, i: number): number => {
  const c = text.charCodeAt(i)
  return i > 0 && c >= 0xdc00 && c <= 0xdfff ? i - 1 : i
}

/**
 * A window of `text` from a little before the first matching token, with every matching token in
 * it highlighted (overlapping CJK pairs merge into one range).
 */
export function snippetOf(
  text: string,
  tokens: readonly Token[],
  matches: (term: string) => boolean,
): Snippet {
  const hit = tokens.filter((t) => matches(t.term))
  const first = hit[0]?.start ?? 0
  let start = Math.max(0, first - LEAD)
  if (start > 0) {
    // Start at a word boundary when there is one near.
    const space = text.lastIndexOf(' ', first - 1)
    start = space >= start ? space + 1 : start
  }
  start = boundary(text, start)
  const end = boundary(text, Math.min(text.length, start + SNIPPET_CHARS))
  const head = start > 0 ? ELLIPSIS : ''
  const body = text.slice(start, end)
  const ranges: [number, number][] = []
  for (const t of hit) {
    if (t.start < start || t.end > end) continue
    const a = t.start - start + head.length
    const b = t.end - start + head.length
    const last = ranges[ranges.length - 1]
    if (last && a <= last[1]) last[1] = Math.max(last[1], b)
    else ranges.push([a, b])
  }
  return { text: head + body + (end < text.length ? ELLIPSIS : ''), highlights: ranges }
}
