import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pushMutations, sessionChanges } from '../../support/sync-push.js'
import type { BenchRow, Workload } from '../types.js'
import { memory, start, stop } from './s5-postgres.js'
import { repoRoot } from './s4-server.js'

/** `S8_SESSIONS`: the sizes, comma-separated (default 10,000 and 100,000 sessions). */
const SIZES = (process.env.S8_SESSIONS ?? '10000,100000').split(',').map(Number)
/** Starts measured per size, after the first (which may read the files written since the last checkpoint). */
const RUNS = 3
const BATCH = 999

/**
 * S8: the file storage's cold start in the number of sessions (issue 28). A data directory of
 * N one-message sessions, filled through POST /sync/push (untimed), the server stopped, then
 * started RUNS + 1 times: the time from spawn to its "listening" line and its RSS then. The
 * first start is reported in the note (it reads the files of the sessions written since the
 * last checkpoint and writes the head index); the rows are the median of the others.
 */
const s8: Workload = {
  id: 'S8',
  title: `file storage cold start at ${SIZES.map((n) => n.toLocaleString('en-US')).join(' and ')} sessions`,
  env: 'node',
  async run(ctx) {
    const root = repoRoot()
    const rows: BenchRow[] = []
    for (const n of SIZES) {
      const dir = mkdtempSync(join(tmpdir(), 'colloquy-s8-'))
      const args = ['--data-dir', join(dir, 'data')]
      try {
        let server = await start(root, args)
        let changes: unknown[] = []
        let id = 1
        const flush = async (): Promise<void> => {
          await pushMutations(
            server.url,
            's8',
            changes.map((change) => ({ id: id++, change })),
            { what: 'S8 fill' },
          )
          changes = []
        }
        for (let i = 0; i < n; i++) {
          const session_id = `s-${String(i).padStart(6, '0')}`
          changes.push(
            ...sessionChanges(session_id, `chat ${i}`, 1_700_000_000_000 + i, 1, () => ({
              role: 'user',
              content: [
                { type: 'text', text: `hello from ${session_id}, a message of some length`.repeat(3) },
              ],
              timestamp: 0,
            })),
          )
          if (changes.length >= BATCH) await flush()
        }
        if (changes.length) await flush()
        await stop(server)
        const starts: Array<{ ms: number; rss: number }> = []
        for (let r = 0; r <= RUNS; r++) {
          server = await start(root, args)
          starts.push({ ms: server.startMs, rss: memory(server.child.pid).rss })
          await stop(server)
        }
        const [first, ...rest] = starts
        const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]
        const busy = loadavg()[0].toFixed(1)
        const note = `${n.toLocaleString('en-US')} sessions of one message; median of ${RUNS} starts (${rest.map((s) => s.ms.toFixed(0)).join(', ')} ms), the first start ${first.ms.toFixed(0)} ms; 1-min load average ${busy}`
        ctx.log(`S8 ${n}: ${note}`)
        rows.push(
          {
            id: 'S8',
            subject: `file storage, ${n.toLocaleString('en-US')} sessions`,
            metric: 'start time',
            value: median(rest.map((s) => s.ms)),
            unit: 'ms',
            better: 'lower',
            note,
          },
          {
            id: 'S8',
            subject: `file storage, ${n.toLocaleString('en-US')} sessions`,
            metric: 'RSS after start',
            value: median(rest.map((s) => s.rss)),
            unit: 'MiB',
            better: 'lower',
          },
        )
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
    return rows
  },
}

export default s8
