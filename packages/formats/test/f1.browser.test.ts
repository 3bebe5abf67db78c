import { describe, expect, it } from 'vitest'
import { generateClaudeJsonl, runF1 } from '../../../test/bench/workloads/f1-import.js'

// The F1 benchmark workload, run small so the suite stays fast: it must import every entry of
// the generated file into real IndexedDB and report well-formed rows. Timings are printed,
// never asserted (benchmarks are a separate command). Run it at full size with
//   VITE_F1_MB=50 npx vitest run --project browser packages/formats/test/f1.browser.test.ts
const mb = Number(import.meta.env.VITE_F1_MB ?? 4)
const chunk = import.meta.env.VITE_F1_CHUNK ? Number(import.meta.env.VITE_F1_CHUNK) : undefined

describe('F1 workload in Chromium', () => {
  it(`imports a generated ${mb} MB Claude Code JSONL into IndexedDB and reports time, entries/s and peak heap`, async () => {
    const logs: string[] = []
    let n = 0
    const expected = generateClaudeJsonl(mb * 1024 * 1024)
    const rows = await runF1(
      { dbName: (l) => `f1-test-${l}-${Date.now()}-${++n}`, log: (m) => void logs.push(m) },
      mb * 1024 * 1024,
      chunk,
      1,
    )
    console.log(logs.join('\n'), JSON.stringify(rows, null, 1))
    expect(rows.map((r) => `${r.subject} ${r.metric}`)).toEqual([
      'colloquy time',
      'raw idb time',
      'colloquy entries/s',
      'raw idb entries/s',
      'colloquy write entries/s',
      'raw idb write entries/s',
      'colloquy peak heap',
      'raw idb peak heap',
    ])
    expect(rows[0].note).toContain(`${expected.entries} entries`)
    for (const r of rows.slice(0, 6)) expect(r.value).toBeGreaterThan(0)
    // Every subject wrote every entry of the file.
    expect(logs).toHaveLength(4)
    for (const l of logs)
      expect(l).toMatch(new RegExp(`${expected.lines} lines, ${expected.entries} entries`))
  }, 120_000)
})
