import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { termCounts, tokenize } from '../../src/search/tokenize.js'

// ASCII text the way messages hold it: words, digits, `_`, punctuation, spaces, control
// characters, long runs past the term bound.
const asciiText = fc
  .array(
    fc.oneof(
      fc.string({ unit: fc.constantFrom(...'aZq_09 .,-\t\n\x00\x7f"/(){}'.split('')), maxLength: 12 }),
      fc.string({ unit: fc.constantFrom('a', 'B', '1'), minLength: 60, maxLength: 70 }),
      fc.string({ unit: 'binary-ascii', maxLength: 20 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''))

describe('tokenize', () => {
  it('cuts ASCII text as the general path cuts it (terms and offsets)', () => {
    fc.assert(
      fc.property(asciiText, (text) => {
        // One character past ASCII at the end sends the same text down the general path.
        const general = tokenize(`${text} é`)
        expect(general.at(-1)?.term).toBe('e')
        expect(tokenize(text)).toEqual(general.slice(0, -1))
      }),
      { numRuns: 500 },
    )
  })

  it('counts what it cuts', () => {
    fc.assert(
      fc.property(fc.oneof(asciiText, fc.string({ unit: 'grapheme', maxLength: 40 })), (text) => {
        const counts = new Map<string, number>()
        const tokens = tokenize(text)
        expect(termCounts(text, counts)).toBe(tokens.length)
        const expected = new Map<string, number>()
        for (const t of tokens) expected.set(t.term, (expected.get(t.term) ?? 0) + 1)
        expect(counts).toEqual(expected)
      }),
      { numRuns: 300 },
    )
  })
})
