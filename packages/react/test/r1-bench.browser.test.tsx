import { describe, expect, it } from 'vitest'
import { measureR1, r1Rows } from './bench/r1-workload.js'

// The R1/R2 benchmark's workload, smaller (this is React's development build, many times slower
// than the benchmark's production one): its structural claims are asserted here, its timings
// only printed. Timings are for `pnpm bench R1`, never assertions in tests.
const OPTIONS = { messages: 200, updates: 200 }

describe('R1 / R2 workload', () => {
  it('streams updates into the last message: hooks render one row per update, the baseline the whole list', async () => {
    const runs = await measureR1(OPTIONS, () => {}, 1)
    for (const row of r1Rows(runs, OPTIONS))
      console.log(
        `[R1] ${row.subject} · ${row.metric}: ${row.value.toFixed(2)} ${row.unit}${row.pass === undefined ? '' : row.pass ? ' (target met)' : ' (TARGET MISSED)'}`,
      )
    for (const hooks of [runs.hooks, runs['hooks-list'], runs['hooks-chunked']]) {
      expect(hooks.rendersPerUpdate).toBe(1)
      expect(hooks.commits).toBe(OPTIONS.updates)
    }
    expect(runs['whole-list'].rendersPerUpdate).toBe(OPTIONS.messages + 1)
    expect(runs['whole-list'].commits).toBe(OPTIONS.updates)
  })
})
