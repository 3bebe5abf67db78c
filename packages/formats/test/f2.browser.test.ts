import { describe, expect, it } from 'vitest'
import { generateChatGptExport, runF2 } from '../../../test/bench/workloads/f2-chatgpt.js'

// The F2 benchmark workload, run small so the suite stays fast: every conversation of the
// generated ChatGPT export must land in real IndexedDB as its own session with all 13 entries.
// Timings are printed, never asserted (`pnpm bench -- F2` measures 2,000 conversations).
const n = Number(import.meta.env.VITE_F2_CONVERSATIONS ?? 40)

describe('F2 workload in Chromium', () => {
  it(`imports a generated ChatGPT export of ${n} conversations into IndexedDB and reports conversations/s and peak heap`, async () => {
    const logs: string[] = []
    let k = 0
    const file = generateChatGptExport(n)
    const rows = await runF2(
      { dbName: (l) => `f2-test-${l}-${Date.now()}-${++k}`, log: (m) => void logs.push(m) },
      n,
    )
    console.log(logs.join('\n'), JSON.stringify(rows, null, 1))
    expect(rows.map((r) => r.metric)).toEqual(['time', 'conversations/s', 'peak heap'])
    expect(rows[0].note).toContain(`${n} conversations, ${file.entries} entries`)
    expect(rows[1].value).toBeGreaterThan(0)
  }, 120_000)
})
