import { invalidRequest } from '../errors.js'

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d

/**
 * `JSON.parse` of a large text in pieces, with `pause()` awaited (other requests served) each
 * time about `pieceChars` characters were parsed or scanned: V8's `JSON.parse` cannot be resumed,
 * but the children of a container can each be given to it alone. A container that closes within
 * `pieceChars` of its start is one native `JSON.parse`; a larger one is walked here, member by
 * member, and rebuilt. The walk holds only JSON's grammar between members (whitespace, `,`, `:`,
 * brackets); every value, key and number is read by `JSON.parse` itself, so what is accepted and
 * what it becomes are the one-pass parse's: keys are defined as `JSON.parse` defines them (an own
 * `__proto__` property, never the prototype; a repeated key's last value in its first place).
 *
 * The text must have passed the JSON shape check (`json-limits.ts`) first: it bounds the
 * nesting, hence this walk's recursion, and every string's length. A malformed text is a 400
 * `session/invalid_request` "malformed JSON: …" in V8's words, at the position in the whole text
 * (where V8 quotes the text instead, it quotes the piece).
 */
export async function parseInPieces(
  text: string,
  pieceChars: number,
  pause: () => Promise<void>,
): Promise<unknown> {
  const n = text.length
  let i = 0
  let since = 0
  /** Counts `chars` about to be parsed in this turn, first letting the loop turn if they would not fit in it. */
  const spend = async (chars: number): Promise<void> => {
    if (since > 0 && since + chars > pieceChars) {
      since = 0
      await pause()
    }
    since += chars
  }
  // In V8's words, so a refusal reads as the one-pass parse's (`parsed` in json-limits.ts).
  const malformed = (at: number, what: string): Error =>
    invalidRequest(`malformed JSON: ${what} in JSON at position ${at}`)
  const skipSpace = (): void => {
    while (i < n && isSpace(text.charCodeAt(i))) i++
  }
  /** Just past the closing quote of the string opening at `start` (`n` when it never closes). */
  const stringEnd = (start: number): number => {
    for (let q = start; ;) {
      q = text.indexOf('"', q + 1)
      if (q < 0) return n
      let k = q - 1
      while (k > start && text.charCodeAt(k) === 0x5c /* \ */) k--
      if ((q - 1 - k) % 2 === 0) return q + 1
    }
  }
  /**
   * Where the value at `start` ends: a string's closing quote, a number's or literal's next
   * delimiter, a container's closing bracket if it is within `pieceChars`; -1 for a container
   * that does not close that soon (it is walked). Scanned characters are counted by the caller.
   */
  const valueEnd = (start: number): number => {
    const c = text.charCodeAt(start)
    if (c === 0x22 /* " */) return stringEnd(start)
    if (c !== 0x5b /* [ */ && c !== 0x7b /* { */) {
      let e = start
      for (; e < n; e++) {
        const d = text.charCodeAt(e)
        if (d === 0x2c || d === 0x5d || d === 0x7d || isSpace(d)) break
      }
      return e
    }
    const stop = Math.min(n, start + pieceChars)
    let depth = 0
    for (let e = start; e < stop; e++) {
      const d = text.charCodeAt(e)
      if (d === 0x22) e = stringEnd(e) - 1
      else if (d === 0x5b || d === 0x7b) depth++
      else if (d === 0x5d || d === 0x7d) {
        if (--depth === 0) return e + 1
      }
    }
    return -1
  }
  /**
   * Where a run of whole members starting at `from` ends, the members of a container being
   * walked: the last `,` at their level within `budget` characters, or the container's closing bracket
   * if it comes first; -1 when the first member alone runs past it.
   */
  const runEnd = (from: number, budget: number): number => {
    const stop = Math.min(n, from + budget)
    let depth = 0
    let last = -1
    for (let e = from; e < stop; e++) {
      const d = text.charCodeAt(e)
      if (d === 0x22) e = stringEnd(e) - 1
      else if (d === 0x5b || d === 0x7b) depth++
      else if (d === 0x5d || d === 0x7d) {
        if (depth-- === 0) return e
      } else if (d === 0x2c && depth === 0) last = e
    }
    return last
  }
  /**
   * One piece to the native parser: `text` from `start` to `end`, between `open` and `close` when
   * it is a run of members. Its failure names the position in the whole text.
   */
  const piece = (start: number, end: number, open = '', close = ''): unknown => {
    try {
      return JSON.parse(open + text.slice(start, end) + close)
    } catch (e) {
      const message = (e as Error).message.replace(
        /at position (\d+)/,
        (_, k) => `at position ${start - open.length + Number(k)}`,
      )
      throw invalidRequest(`malformed JSON: ${message}`)
    }
  }
  /** The run of members from `i` (see `runEnd`) parsed in one piece, or undefined if the next member is large. */
  const run = async (open: string, close: string): Promise<unknown> => {
    const start = i
    // A run fills what is left of the current slice; one that cannot hold even its first member
    // waits for the next slice.
    let end = runEnd(start, pieceChars - since)
    if (end <= start && since > 0) {
      since = 0
      await pause()
      end = runEnd(start, pieceChars)
    }
    // An empty run (`[,` or `{,`) is left to the member's own parse, which refuses it.
    if (end <= start) return undefined
    i = end
    await spend(end - start)
    return piece(start, end, open, close)
  }
  const value = async (): Promise<unknown> => {
    skipSpace()
    const start = i
    if (start >= n) throw invalidRequest('malformed JSON: Unexpected end of JSON input')
    const end = valueEnd(start)
    if (end >= 0) {
      i = end
      await spend(end - start)
      return piece(start, end)
    }
    await spend(Math.min(n, start + pieceChars) - start)
    i = start + 1
    if (text.charCodeAt(start) === 0x5b) {
      const out: unknown[] = []
      skipSpace()
      if (text.charCodeAt(i) === 0x5d) return (i++, out)
      for (;;) {
        skipSpace()
        const members = (await run('[', ']')) as unknown[] | undefined
        if (members) for (const m of members) out.push(m)
        else out.push(await value())
        skipSpace()
        const d = text.charCodeAt(i++)
        if (d === 0x5d) return out
        if (d !== 0x2c) throw malformed(i - 1, "Expected ',' or ']' after array element")
      }
    }
    const out: Record<string, unknown> = {}
    skipSpace()
    if (text.charCodeAt(i) === 0x7d) return (i++, out)
    // As JSON.parse defines them: an own property even for `__proto__`, a repeated key's last
    // value in its first place.
    const define = (key: string, value: unknown): void =>
      void Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true })
    for (let first = true; ; first = false) {
      skipSpace()
      const members = (await run('{', '}')) as Record<string, unknown> | undefined
      if (members) {
        for (const key of Object.keys(members)) define(key, members[key])
        skipSpace()
        const d = text.charCodeAt(i++)
        if (d === 0x7d) return out
        if (d !== 0x2c) throw malformed(i - 1, "Expected ',' or '}' after property value")
        continue
      }
      if (text.charCodeAt(i) !== 0x22)
        throw malformed(i, first ? "Expected property name or '}'" : 'Expected double-quoted property name')
      const keyStart = i
      i = stringEnd(keyStart)
      await spend(i - keyStart)
      const key = piece(keyStart, i) as string
      skipSpace()
      if (text.charCodeAt(i++) !== 0x3a) throw malformed(i - 1, "Expected ':' after property name")
      define(key, await value())
      skipSpace()
      const d = text.charCodeAt(i++)
      if (d === 0x7d) return out
      if (d !== 0x2c) throw malformed(i - 1, "Expected ',' or '}' after property value")
    }
  }
  const result = await value()
  skipSpace()
  if (i < n) throw malformed(i, 'Unexpected non-whitespace character after JSON')
  return result
}
