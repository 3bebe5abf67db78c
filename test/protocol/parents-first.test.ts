import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parentsFirst, type Linked } from '@colloquy/core/protocol'

const e = (id: string, parent_id: string | null): Linked => ({ id, parent_id })
const ids = (list: readonly Linked[]): string[] => list.map((x) => x.id)

/**
 * A forest given in any order, some of whose parents are left out of the set (as a bulk import's
 * later chunk leaves out the parents an earlier chunk brought).
 */
const forest = fc
  .array(fc.nat(), { maxLength: 60 })
  .chain((picks) => {
    // Entry i's parent is one of the entries before it, or none (a root).
    const all = picks.map((p, i) => e(`e${i}`, i === 0 || p % 4 === 0 ? null : `e${p % i}`))
    return fc.tuple(
      fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }),
      fc.array(fc.boolean(), { minLength: all.length, maxLength: all.length }),
    )
  })
  .map(([shuffled, keep]) => shuffled.filter((_, i) => keep[i] || i % 3 !== 0))

describe('parentsFirst', () => {
  it('keeps an entry whose parent is not in the set, after the entries whose trees are', () => {
    const got = parentsFirst([
      e('orphan', 'absent'),
      e('c', 'b'),
      e('a', null),
      e('orphan-child', 'orphan'),
      e('b', 'a'),
    ])
    expect(ids(got)).toStrictEqual(['a', 'b', 'c', 'orphan', 'orphan-child'])
  })

  it('keeps what a cycle leaves without a root, and a chain thousands deep, without recursion', () => {
    expect(ids(parentsFirst([e('x', 'y'), e('y', 'x'), e('r', null)]))).toStrictEqual(['r', 'x', 'y'])
    const chain = Array.from({ length: 20_000 }, (_, i) => e(`e${i}`, i ? `e${i - 1}` : null)).reverse()
    expect(ids(parentsFirst(chain))).toStrictEqual(ids(chain).reverse())
  })

  it('property: a topological order of its input, nothing dropped, nothing added, roots present first', () => {
    fc.assert(
      fc.property(forest, (input) => {
        const out = parentsFirst(input)
        // The same entries (by identity), each once.
        expect(new Set(out).size).toBe(out.length)
        expect([...out].sort((a, b) => a.id.localeCompare(b.id))).toStrictEqual(
          [...input].sort((a, b) => a.id.localeCompare(b.id)),
        )
        const at = new Map(out.map((x, i) => [x.id, i]))
        for (const x of out)
          if (x.parent_id !== null && at.has(x.parent_id))
            expect(at.get(x.parent_id)!).toBeLessThan(at.get(x.id)!)
        // Everything under a real root comes before any tree whose root's parent is absent.
        const present = new Set(input.map((x) => x.id))
        const rooted = (x: Linked): boolean => {
          for (
            let y: Linked | undefined = x;
            y;
            y = y.parent_id === null ? undefined : input.find((z) => z.id === y!.parent_id)
          ) {
            if (y.parent_id === null) return true
            if (!present.has(y.parent_id)) return false
          }
          return false
        }
        const flags = out.map(rooted)
        expect(flags).toStrictEqual([...flags].sort((a, b) => Number(b) - Number(a)))
      }),
      { numRuns: 300 },
    )
  })
})
