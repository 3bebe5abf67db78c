import { describe, expect, it } from 'vitest'
import { WORK_BUDGETS } from '../../packages/server/src/work.js'
import { pull, pushChanges, useMemoryServer } from './helpers.js'

// A pull page holds about WORK_BUDGETS.pullChars of JSON (at least one change), however large
// the changes and the `limit`: the pages that follow hold the rest, each change once, in order.
const server = useMemoryServer()

const entry = (i: number) => ({
  id: `e${i}`,
  parent_id: i === 0 ? null : `e${i - 1}`,
  timestamp: 1,
  revision: 0,
  kind: 'message' as const,
  message: {
    role: 'user' as const,
    content: [{ type: 'text' as const, text: `${i}`.padEnd(100_000, 'x') }],
    timestamp: 0,
  },
})

describe('pull page size', () => {
  it('40 messages of 100,000 characters come in pages of about WORK_BUDGETS.pullChars, all of them, in order', async () => {
    const meta = {
      session_id: 'big',
      title: 'big',
      description: '',
      status: 'idle' as const,
      kind: 'user' as const,
      created_at: 1,
      updated_at: 1,
      message_count: 0,
    }
    await pushChanges(server.url, [{ type: 'meta', create: true, meta } as never])
    for (let b = 0; b < 4; b++) {
      await pushChanges(
        server.url,
        Array.from(
          { length: 10 },
          (_, k) =>
            ({ type: 'entry', session_id: 'big', base_revision: null, entry: entry(b * 10 + k) }) as never,
        ),
      )
    }
    const ids: string[] = []
    const seqs: number[] = []
    let checkpoint = 0
    let pages = 0
    for (;;) {
      const page = await pull(server.url, checkpoint, 5000)
      pages++
      // A page's changes: at most the budget plus the one change that passed it.
      expect(JSON.stringify(page.changes.map((c) => c.change)).length).toBeLessThanOrEqual(
        WORK_BUDGETS.pullChars + 110_000,
      )
      for (const c of page.changes) {
        seqs.push(c.seq)
        if (c.change.type === 'entry') ids.push(c.change.entry.id)
      }
      checkpoint = page.checkpoint
      if (!page.more) break
    }
    expect(pages).toBeGreaterThanOrEqual(Math.floor((40 * 100_000) / (WORK_BUDGETS.pullChars + 110_000)))
    expect(ids).toStrictEqual(Array.from({ length: 40 }, (_, i) => `e${i}`))
    expect(seqs).toStrictEqual([...new Set(seqs)].sort((a, b) => a - b))
  })
})
