import type { SessionMeta } from '@colloquy/core'
import { describe, expect, it } from 'vitest'
import { parseFile } from '../../packages/server/src/storage/file/jsonl.js'
import { oneAtATime, slicer, WORK_BUDGETS } from '../../packages/server/src/work.js'
import { newSessionMeta } from '../support/sync-push.js'

// A session file read again (a session the working set let go, a commit touching a thousand of
// them) is parsed a slice at a time, and files parsed at once take turns: one turn of the event
// loop parses about one slice, however many files are being read. Counted, not timed.

/** A session file of `records` meta lines with large metadata (about 2.6 KB each). */
function sessionFile(id: string, records: number): Buffer {
  const tags = Array.from({ length: 500 }, (_, i) => i)
  const change = newSessionMeta(id, `Session ${id}`, 1_000, { metadata: { tags } })
  const meta = (change as { meta: SessionMeta }).meta
  const lines: string[] = []
  for (let i = 0; i < records; i++)
    lines.push(JSON.stringify({ type: 'meta', meta: { ...meta, updated_at: 1_000 + i }, tx: i + 1 }))
  return Buffer.from(lines.join('\n') + '\n')
}

/** Counts the characters parsed in each turn of the event loop while `work` runs. */
async function perTurn(
  work: (built: () => (chars: number) => Promise<void>) => Promise<unknown>,
): Promise<number[]> {
  const turns: number[] = [0]
  let running = true
  const tick = (): void => {
    if (!running) return
    turns.push(0)
    setImmediate(tick)
  }
  setImmediate(tick)
  await work(() => {
    const slice = slicer()
    return (chars) => {
      turns[turns.length - 1] += chars
      return slice(chars)
    }
  })
  running = false
  return turns
}

describe('session files parsed in slices', () => {
  it('parses a long file a slice at a time, every record kept', async () => {
    const buf = sessionFile('s-long', 400)
    let records = 0
    const turns = await perTurn(async (built) => {
      records = (await parseFile(buf, built())).lines.length
    })
    expect(records).toBe(400)
    expect(turns.filter((t) => t > 0).length).toBeGreaterThan(10)
    // A slice, plus the one line that crossed it.
    expect(Math.max(...turns)).toBeLessThanOrEqual(WORK_BUDGETS.sliceChars + 4_000)
  })

  it('files parsed at once take turns: a turn parses about one slice, not one per file', async () => {
    const files = Array.from({ length: 40 }, (_, i) => sessionFile(`s-${i}`, 40))
    const parsing = oneAtATime()
    const turns = await perTurn(async (built) => {
      // One count for every file, as the file storage keeps: a file's last part and the next
      // file's first share a slice.
      const shared = built()
      const parsed = await Promise.all(files.map((buf) => parsing(() => parseFile(buf, shared))))
      expect(parsed.map((p) => p.lines.length)).toEqual(files.map(() => 40))
    })
    expect(Math.max(...turns)).toBeLessThanOrEqual(WORK_BUDGETS.sliceChars + 4_000)
    // Without taking turns, every file's first slice falls in the same turn.
    const together = await perTurn(async (built) => {
      await Promise.all(files.map((buf) => parseFile(buf, built())))
    })
    expect(Math.max(...together)).toBeGreaterThan(10 * WORK_BUDGETS.sliceChars)
  })
})
