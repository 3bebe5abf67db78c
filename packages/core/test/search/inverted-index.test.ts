import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { WorkMeter } from '../../src/ops/work.js'
import { termCounts } from '../../src/search/tokenize.js'
import {
  InvertedIndex,
  docOf,
  packTerms,
  unpackTerms,
  type Doc,
  type DocTerms,
} from '../../src/search/inverted-index.js'

const TERMS = ['alpha', 'alps', 'beta', 'bet', 'gamma', 'delta', '東京', 'x']

/** The terms picked, with their counts (a term picked twice: its last count). */
const given = (picks: readonly [number, number][]): { terms: string[]; tfs: number[] } => {
  const tf = new Map<string, number>()
  for (const [t, c] of picks) tf.set(TERMS[t], c)
  return { terms: [...tf.keys()], tfs: [...tf.values()] }
}

const built = (n: number, g: { terms: string[]; tfs: number[] }): DocTerms => ({
  sid: `s${n % 3}`,
  eid: `e${n}`,
  role: 'user',
  ts: n,
  parent: null,
  rev: 0,
  len: g.tfs.reduce((a, b) => a + b, 0),
  ...packTerms(new Map(g.terms.map((t, i) => [t, g.tfs[i]]))),
})

/** The index's documents holding `term`, with their frequencies, skipping tombstones. */
const held = (index: InvertedIndex, term: string): string[] => {
  const list = index.postings(term)
  const out: string[] = []
  for (let i = 0; list && i < list.n; i++) {
    const doc = index.doc(list.ids[i])
    if (doc) out.push(`${doc.eid}:${list.tfs[i]}`)
  }
  return out
}

const ops = fc.array(
  fc.oneof(
    fc.record({
      add: fc.array(fc.tuple(fc.nat(TERMS.length - 1), fc.integer({ min: 1, max: 70_000 })), {
        maxLength: 5,
      }),
    }),
    fc.record({ remove: fc.nat() }),
    // Many documents added then most removed: past the thresholds of list compaction and renumbering.
    fc.record({ churn: fc.integer({ min: 4_000, max: 9_000 }) }),
  ),
  { maxLength: 40 },
)

describe('inverted index', () => {
  it('holds what was added and not removed, through tombstones, list compaction and renumbering', () => {
    fc.assert(
      fc.property(ops, (steps) => {
        const index = new InvertedIndex()
        // What each document was given (counts uncapped: the index caps them).
        const model = new Map<Doc, { terms: string[]; tfs: number[] }>()
        let n = 0
        for (const step of steps) {
          if ('add' in step) {
            const g = given(step.add)
            model.set(index.add(built(n++, g)), g)
          } else if ('remove' in step) {
            const docs = [...model.keys()]
            if (!docs.length) continue
            const doc = docs[step.remove % docs.length]
            index.remove(doc)
            model.delete(doc)
          } else {
            const added = Array.from({ length: step.churn }, () => {
              const g = given([[n % TERMS.length, 1]])
              return [index.add(built(n++, g)), g] as const
            })
            for (const [doc, b] of added)
              if (doc.id % 50 !== 0) index.remove(doc)
              else model.set(doc, b)
          }
        }
        expect(index.size).toBe(model.size)
        for (const term of TERMS) {
          const expected = [...model.entries()]
            .flatMap(([d, b]) =>
              b.terms.flatMap((t, i) => (t === term ? [`${d.eid}:${Math.min(b.tfs[i], 0xffff)}`] : [])),
            )
            .sort()
          expect(held(index, term).sort(), term).toEqual(expected)
          // Ids ascend in every list (a compaction renumbers in order).
          const list = index.postings(term)
          for (let i = 1; list && i < list.n; i++) expect(list.ids[i]).toBeGreaterThan(list.ids[i - 1])
          expect(index.postings(term)?.df ?? 0).toBe(expected.length)
          // Tombstones never outnumber the documents a list holds (it is compacted before).
          if (list) expect(list.n).toBeLessThanOrEqual(list.df * 2)
        }
        for (const [doc, b] of model) {
          expect(index.doc(doc.id)).toBe(doc)
          // Persisted and read back (format 2's packed terms), then unpacked: what was given.
          const back = unpackTerms(index.built(doc))
          expect(back.terms).toEqual(b.terms)
          expect(back.tfs).toEqual(b.tfs.map((t) => Math.min(t, 0xffff)))
        }
        // Prefixes find the words documents still hold, and only those.
        const { terms } = index.prefixTerms('al', new WorkMeter(1e9))
        const live = ['alpha', 'alps'].filter((t) => [...model.values()].some((b) => b.terms.includes(t)))
        expect(terms.map((l) => l.df).sort()).toEqual(live.map((t) => index.postings(t)!.df).sort())
      }),
      { numRuns: 40 },
    )
  })
})

describe('a document built from text', () => {
  it('holds each distinct term with the count termCounts gives it, its length their sum', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('alpha', 'Alpha', 'beta', 'Café', '東京都', '🚀', 'x', ' ', '. '), {
          maxLength: 40,
        }),
        (parts) => {
          const text = parts.join(' ')
          const counts = new Map<string, number>()
          const len = termCounts(text, counts)
          const doc = docOf({ sid: 's', eid: 'e', role: 'user', ts: 0, parent: null, rev: 0 }, text)
          const { terms, tfs } = unpackTerms(doc)
          expect(new Map(terms.map((t, i) => [t, tfs[i]]))).toEqual(counts)
          expect(terms).toHaveLength(counts.size)
          expect(doc.len).toBe(len)
        },
      ),
    )
  })

  it('holds term numbers past 16 bits, through compactions of the pool of removed documents terms', () => {
    const index = new InvertedIndex()
    const kept = new Map<Doc, string[]>()
    const doc = (n: number, terms: string[]): DocTerms => ({
      sid: 's',
      eid: `e${n}`,
      role: 'user',
      ts: n,
      parent: null,
      rev: 0,
      len: terms.length,
      ...packTerms(new Map(terms.map((t) => [t, 1]))),
    })
    // A vocabulary past 65,535 terms: documents holding the later ones need wide slots.
    for (let i = 0; i < 70_000; i++) {
      const terms = ['common', `w${i}`]
      const d = index.add(doc(i, terms))
      if (i % 1000 === 0 || i >= 69_990) kept.set(d, terms)
      else index.remove(d)
    }
    // Few documents of many terms each, added and removed: the pool's holes outgrow what it
    // holds long before the documents' ids do.
    for (let k = 0; k < 12; k++) {
      const terms = Array.from({ length: 20_000 }, (_, j) => `big${k}x${j}`)
      const d = index.add(doc(100_000 + k, terms))
      if (k === 11) kept.set(d, terms)
      else index.remove(d)
    }
    expect(index.size).toBe(kept.size)
    for (const [d, terms] of kept) {
      expect(index.doc(d.id)).toBe(d)
      expect(unpackTerms(index.built(d)).terms).toEqual(terms)
    }
    expect(index.postings('common')?.df).toBe(kept.size - 1)
    expect(index.postings('w69995')?.df).toBe(1)
    expect(index.postings('w69994')?.df).toBe(1)
    expect(index.postings('w500')).toBeUndefined()
    expect(index.postings('big3x7')).toBeUndefined()
    expect(index.postings('big11x19999')?.df).toBe(1)
  })
})
