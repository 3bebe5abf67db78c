import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

// Each package's public surface is committed as text (etc/api/*.api.md): a change to what a
// package exports must show up as a diff of its report, refreshed by `pnpm run api`.
test('the committed API reports match every package public surface', () => {
  const run = spawnSync(process.execPath, ['scripts/api-report.mjs', '--check'], {
    cwd: root,
    encoding: 'utf8',
  })
  // The script names the reports that differ and the command that refreshes them.
  expect(run.status, run.stderr).toBe(0)
  expect(run.stdout).toMatch(/API reports up to date \(\d+ packages\)/)
}, 240_000)
