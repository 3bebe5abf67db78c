import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PageBuilder, pageJson } from '../src/changes/change-feed.js'
import { WORK_BUDGETS } from '../src/work.js'

// A pull page is encoded once, change by change, as it is read: the answer built from those
// encodings is exactly the page's JSON, and the page stops reading at its budget.

const leaf = (seq: number, text: string) => ({
  seq,
  change: { type: 'leaf' as const, session_id: text, entry_id: null },
})

describe('pull page encoding', () => {
  it('the answer built from the encodings is the JSON of the page, whatever the changes hold', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 20 }),
        fc.boolean(),
        fc.option(fc.string()),
        (ids, more, epoch) => {
          const page = new PageBuilder()
          ids.forEach((id, i) => expect(page.add(leaf(i + 1, id))).toBe(true))
          const plain = {
            changes: page.changes,
            checkpoint: ids.length,
            head: ids.length + 3,
            more,
            ...(epoch !== null && { epoch }),
          }
          expect(pageJson({ ...plain, encoded: page.encoded })).toBe(JSON.stringify(plain))
          // A page without encodings (or with stale ones) is encoded whole.
          expect(pageJson(plain)).toBe(JSON.stringify(plain))
          expect(pageJson({ ...plain, encoded: page.encoded.slice(1) })).toBe(JSON.stringify(plain))
        },
      ),
    )
  })

  it('keeps changes until the next would pass the budget, and always the first however large', () => {
    const page = new PageBuilder()
    expect(page.add(leaf(1, 'x'.repeat(WORK_BUDGETS.pullChars * 2)))).toBe(true)
    expect(page.add(leaf(2, 'y'))).toBe(false)
    const small = new PageBuilder()
    const each = JSON.stringify(leaf(1, 'z'.repeat(1000))).length
    let kept = 0
    while (small.add(leaf(kept + 1, 'z'.repeat(1000)))) kept++
    expect(kept).toBe(Math.floor(WORK_BUDGETS.pullChars / each))
    expect(small.encoded.join('').length).toBeLessThanOrEqual(WORK_BUDGETS.pullChars)
  })
})
