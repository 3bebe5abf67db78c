import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isValidId } from '@colloquy/core/wire'
import { fromDb, toDb } from '../src/storage/postgres/codec.js'

// PostgreSQL derives no names from input: ids are values of `text` key columns. The one mapping
// they go through must be storable (no NUL, which `text` refuses), injective (two ids, two keys)
// and bounded (a valid id is at most 255 UTF-8 bytes, its key at most twice that).
const ids = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: fc.constantFrom('\\', '\u0000', '0', 'a', '\u20ac'), maxLength: 300 }),
)

describe('PostgreSQL keys of ids', () => {
  it('hold no NUL, map back to the id, and are at most twice a valid id in bytes', () => {
    fc.assert(
      fc.property(ids, (id) => {
        const key = toDb(id)
        expect(key.includes('\u0000')).toBe(false)
        expect(fromDb(key)).toBe(id)
        if (isValidId(id)) expect(Buffer.byteLength(key)).toBeLessThanOrEqual(2 * 255)
      }),
      { numRuns: 2000 },
    )
  })

  it('two different ids never share a key', () => {
    fc.assert(
      fc.property(ids, ids, (a, b) => a === b || toDb(a) !== toDb(b)),
      { numRuns: 2000 },
    )
    // The pairs an escape could fold if it were not reversible.
    for (const [a, b] of [
      ['\\0', '\u0000'],
      ['\\\\', '\\'],
      ['\\\u0000', '\u0000\\'],
      ['a\\0', 'a\u0000'],
    ])
      expect(toDb(a)).not.toBe(toDb(b))
  })
})
