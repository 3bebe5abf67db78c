import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BLOCK_DOCS, packBlock, placeDoc, unpackBlock } from '../../src/search/doc-block.js'
import { docOf, type SessionDocs } from '../../src/search/inverted-index.js'

const text = fc.array(
  fc.constantFrom('alpha', 'Café', '東京都', '🚀', 'x', 'longerthanthirteen', ' ', '\n'),
  {
    maxLength: 12,
  },
)

describe('document blocks (index format 3)', () => {
  it('unpacks to the documents packed, in order, through a structured clone', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            words: text,
            role: fc.constantFrom('user' as const, 'assistant' as const, null),
            parent: fc.option(fc.string(), { nil: null }),
            ts: fc.integer({ min: 0, max: 2 ** 45 }),
            rev: fc.nat(),
          }),
          { maxLength: 20 },
        ),
        (given) => {
          const docs = given.map((g, i) =>
            docOf(
              { sid: 's', eid: `e${i}`, role: g.role, ts: g.ts, parent: g.parent, rev: g.rev },
              g.role ? g.words.join('') : null,
            ),
          )
          const back = unpackBlock(structuredClone(packBlock('s', 3, docs)))
          expect(back.map((d) => ({ ...d, sizes: [...d.sizes] }))).toEqual(
            docs.map((d) => ({ ...d, sizes: [...d.sizes] })),
          )
        },
      ),
    )
  })

  it('puts new documents in the last block until it is full', () => {
    const s: SessionDocs = { mark: '', title: null, docs: new Map(), blocks: [] }
    const placed = Array.from({ length: BLOCK_DOCS * 2 + 1 }, () => placeDoc(s))
    expect(placed.filter((n) => n === 0)).toHaveLength(BLOCK_DOCS)
    expect(placed.filter((n) => n === 1)).toHaveLength(BLOCK_DOCS)
    expect(placed.at(-1)).toBe(2)
    // Room made in an earlier block by deletes is not taken: the last block still has room.
    s.blocks[0] -= 5
    expect(placeDoc(s)).toBe(2)
    expect(s.blocks).toEqual([BLOCK_DOCS - 5, BLOCK_DOCS, 2])
  })
})
