import { hostOf } from '@colloquy/core/host'
import { WorkMeter } from '@colloquy/core/wire'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage } from '@colloquy/core'
import { ChangeIndex, type LiveRecord } from '../src/changes/change-index.js'
import { ChangeLog } from '../src/changes/change-log.js'
import { WORK_BUDGETS } from '../src/work.js'

// A pull page on the file storage looks at a bounded number of change-log records (a unit of
// work each), however many of them belong to other principals: counted, never timed.

/** A log of `owners.length` sessions, one `created` record each, owned as listed. */
function logOf(owners: readonly string[]): { idx: ChangeIndex; owner: (r: LiveRecord) => string } {
  const idx = new ChangeIndex()
  idx.load(
    owners.map((_, i) => ({ seq: i + 1, kind: 'created' as const, session_id: `s${i}` })),
    owners.length,
  )
  return { idx, owner: (r) => owners[Number(r.session_id.slice(1))]! }
}

describe('pull page scan budget', () => {
  it("bob's one record behind 100,000 of alice's: each page looks at most at its budget, and the pages reach it", () => {
    const owners = [...Array.from({ length: 100_000 }, () => 'alice'), 'bob']
    const { idx, owner } = logOf(owners)
    const bob = (r: LiveRecord): boolean => owner(r) === 'bob'
    // Unbudgeted, one page looks at every record.
    let looked = 0
    idx.scan(0, 500, (r) => (looked++, bob(r)))
    expect(looked).toBe(100_001)
    let checkpoint = 0
    const found: string[] = []
    for (let pages = 1; ; pages++) {
      const meter = new WorkMeter(20_000)
      const page = idx.scan(checkpoint, 500, bob, meter)
      expect(meter.spent).toBeLessThanOrEqual(20_000)
      found.push(...page.records.map((r) => r.session_id))
      expect(page.checkpoint).toBeGreaterThan(checkpoint)
      checkpoint = page.checkpoint
      if (!page.more) {
        expect(pages).toBe(6)
        break
      }
    }
    expect(found).toStrictEqual(['s100000'])
    expect(checkpoint).toBe(idx.head)
  })

  it('pages on any budget deliver exactly what unbudgeted pages deliver', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('alice', 'bob'), { maxLength: 60 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 8 }),
        (owners, budget, limit) => {
          const { idx, owner } = logOf(owners)
          const bob = (r: LiveRecord): boolean => owner(r) === 'bob'
          const all = idx.scan(0, Number.MAX_SAFE_INTEGER, bob).records.map((r) => r.seq)
          const got: number[] = []
          let checkpoint = 0
          for (;;) {
            const meter = new WorkMeter(budget)
            const page = idx.scan(checkpoint, limit, bob, meter)
            expect(meter.spent).toBeLessThanOrEqual(budget)
            expect(page.records.length).toBeLessThanOrEqual(limit)
            got.push(...page.records.map((r) => r.seq))
            if (!page.more) break
            expect(page.checkpoint).toBeGreaterThan(checkpoint)
            checkpoint = page.checkpoint
          }
          expect(got).toStrictEqual(all)
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('pull page size budget', () => {
  it('a page ends once it holds about WORK_BUDGETS.pullChars of JSON; the pages together hold every change', async () => {
    const log = new ChangeLog(memoryStorage())
    const store = await createStore({ storage: log.storage, multiTab: false })
    log.attach(hostOf(store))
    const { session_id } = await store.create({ title: 'big' })
    // 40 messages of 100,000 characters: 4 MB of changes.
    for (let i = 0; i < 40; i++)
      await store.append({
        session_id,
        message: {
          role: 'user',
          content: [{ type: 'text', text: `${i}`.padEnd(100_000, 'x') }],
          timestamp: 0,
        },
      })
    const seqs: number[] = []
    const entries = new Set<string>()
    let checkpoint = 0
    let pages = 0
    for (;;) {
      const page = await log.page(checkpoint, 5000)
      pages++
      expect(JSON.stringify(page.changes).length).toBeLessThanOrEqual(
        WORK_BUDGETS.pullChars + 2 * 1000 + 200_000,
      )
      seqs.push(...page.changes.map((c) => c.seq))
      for (const c of page.changes) if (c.change.type === 'entry') entries.add(c.change.entry.id)
      checkpoint = page.checkpoint
      if (!page.more) break
    }
    expect(pages).toBeGreaterThanOrEqual(4)
    // Every change once, in order: all 40 messages.
    expect(seqs).toStrictEqual([...new Set(seqs)].sort((a, b) => a - b))
    expect(entries.size).toBe(40)
    expect(checkpoint).toBe(log.head)
    await store.close()
  })
})
