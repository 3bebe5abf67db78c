import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from '../../conformance/http-process.js'
import { call, syncPages } from '../subjects/sync-pages.js'
import type { BenchRow, Workload } from '../types.js'

const TOKEN = 'bench-token'
const MODES = ['clear', 'store keys', 'server keyring'] as const
const SUBJECT: Record<(typeof MODES)[number], string> = {
  clear: 'clear',
  'store keys': 'encrypted (store sealed with sync keys: bytes sent as kept)',
  'server keyring': 'encrypted (clear store, server keyring: sealed on upload)',
}
const ROUNDS = 3

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * U1: an attachment uploaded by sync from headless Chromium (real IndexedDB) to a real
 * `colloquy-server` on its file storage, in clear and end-to-end encrypted (issue 26: an upload's
 * memory bounded). Time from `sync.start()` to `flush()` with the attachment put before; median
 * of `ROUNDS`, modes interleaved round by round, each upload from a fresh store in a browser context of its own.
 */
const upload: Workload = {
  id: 'U1',
  title: 'attachment upload through sync: clear vs end-to-end encrypted, 1 MB and 64 MB',
  env: 'node',
  async run(ctx) {
    const rows: BenchRow[] = []
    const dataDir = mkdtempSync(join(tmpdir(), 'colloquy-u1-'))
    const server = await startServer([
      '--data-dir',
      join(dataDir, 'data'),
      '--token',
      `bench=${TOKEN}`,
      '--origin',
      '*',
      '--no-fsync',
      '--max-attachment-bytes',
      String(2 ** 28),
      '--max-stored-bytes',
      '0',
    ])
    let pages: Awaited<ReturnType<typeof syncPages>> | undefined
    try {
      pages = await syncPages()
      for (const [label, bytes] of [
        ['1 MB', 2 ** 20],
        ['64 MB', 64 * 2 ** 20],
      ] as const) {
        const times: Record<string, number[]> = {}
        const load = loadavg()[0]
        for (let r = 0; r < ROUNDS; r++)
          for (const mode of MODES) {
            // A fresh browser context each time: the page's blobs (IndexedDB's in memory here)
            // go with it, and Chromium's blob store never fills up.
            const page = await pages.page()
            try {
              const { ms } = await call<{ ms: number }>(page, 'upload', server.url, TOKEN, mode, bytes)
              ;(times[mode] ??= []).push(ms)
            } finally {
              await page.context().close()
            }
          }
        ctx.log(
          `U1 ${label}: ${JSON.stringify(times)} (load ${load.toFixed(2)} → ${loadavg()[0].toFixed(2)})`,
        )
        for (const mode of MODES)
          rows.push({
            id: 'U1',
            subject: SUBJECT[mode],
            metric: `${label} upload`,
            value: median(times[mode]),
            unit: 'ms',
            better: 'lower',
            ...(mode !== 'clear' && { baseline: SUBJECT.clear }),
            note: `median of ${ROUNDS}: ${times[mode].map((t) => t.toFixed(0)).join(', ')} ms; load ${load.toFixed(2)}`,
          })
      }
    } finally {
      await pages?.close()
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
    return rows
  },
}

export default upload
