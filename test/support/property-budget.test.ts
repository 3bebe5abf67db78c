import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

// The setup file property-budget.ts bounds every property by its test's time. These tests run
// with a 6 s limit, so their properties are interrupted at 4 s: each ends in a failure that says
// what happened, before the test times out. Without the setup file both would time out.
describe('a property that would outlast its test', () => {
  it('fails, naming the seed, when one run never ends', async () => {
    const started = Date.now()
    const never = fc.assert(
      fc.asyncProperty(fc.nat(), (n) => (n < 0 ? Promise.resolve() : new Promise<void>(() => {}))),
    )
    await expect(never).rejects.toThrow(/interrupted[\s\S]*seed/i)
    expect(Date.now() - started).toBeLessThan(5_500)
  }, 6_000)

  it('fails with the failing input found so far when shrinking would take longer', async () => {
    const started = Date.now()
    // Each run takes 400 ms, and every input above 1000 fails: shrinking the first failure takes
    // about 15 runs, 6 s, more than the 4 s left.
    const slow = fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 1_000_000 }), async (n) => {
        await new Promise((r) => setTimeout(r, 400))
        expect(n).toBeLessThanOrEqual(1000)
      }),
      { numRuns: 1_000 },
    )
    await expect(slow).rejects.toThrow(/Counterexample: \[\d+\]/)
    expect(Date.now() - started).toBeLessThan(5_500)
  }, 6_000)
})
