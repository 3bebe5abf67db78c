// Fault injection and the test clock live in the test launcher (test/support/test-server.mjs),
// never in the installed command: every flag the launcher takes is refused by `colloquy-server`,
// and its --help names none of them.
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CLI, TEST_SERVER } from '../conformance/http-process.js'
import { cleanupAfterEach, postJson, rpc, startServer } from './helpers.js'

const { defer } = cleanupAfterEach('test-hooks')
// Read from the launcher itself: a hook flag added there is checked here too.
const LAUNCHER_FLAGS = [...new Set(readFileSync(TEST_SERVER, 'utf8').match(/--test-[a-z-]+/g))]

describe('test hooks are not in the production server', () => {
  it('the launcher has the hooks this test is about', () => {
    expect(LAUNCHER_FLAGS).toEqual(
      expect.arrayContaining([
        '--test-clock',
        '--test-crash-at-commit',
        '--test-crash-before-commit',
        '--test-crash-before-flush',
        '--test-crash-after-bump',
        '--test-hold-after-bump',
        '--test-no-notify',
        '--test-work-log',
      ]),
    )
  })

  it('colloquy-server --help names no test flag, and the command refuses each one (exit 2, nothing started)', () => {
    const help = execFileSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' })
    expect(help).not.toMatch(/--test-/)
    for (const flag of LAUNCHER_FLAGS) {
      const run = spawnSync(process.execPath, [CLI, '--memory', '--port', '0', flag, '1'], {
        encoding: 'utf8',
        timeout: 10_000,
      })
      expect([flag, run.status, run.stdout]).toStrictEqual([flag, 2, ''])
      expect(run.stderr).toContain(`Unknown option '${flag}'`)
    }
  })

  it('the launcher runs the same command line with the test clock injected', async () => {
    const s = await startServer(['--memory', '--test-clock'])
    defer(() => s.stop())
    expect(await (await postJson(`${s.url}/test/clock`, { now: 5 })).json()).toStrictEqual({ now: 5 })
    const created = (await rpc(s.url, 'session::create', { title: 't' })) as {
      session_id: string
      meta: { created_at: number }
    }
    expect([created.session_id, created.meta.created_at]).toStrictEqual(['s_001', 5])
  })
})
