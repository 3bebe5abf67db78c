#!/usr/bin/env node
// `colloquy-server` for tests: the built server's own command line (`runCommandLine`, its public
// API) with the faults and test routes the crash, fairness and conformance tests need, injected
// through its hooks. The installed command has none of these flags or routes; only this file
// (spawned by test/conformance/http-process.ts) does. Its own flags, taken out of the arguments
// before the rest goes to the server's parser:
//
//   --test-clock                  the contract's clock and ids, POST /test/clock and /test/reset
//   --test-crash-before-commit n  file storage: SIGKILL at the n-th commit, just before its journal line
//   --test-crash-at-commit n      file storage: ... just after its journal line (session files not written)
//   --test-crash-before-flush n   file storage: ... between its journal line and that line's flush
//   --test-crash-after-bump n     PostgreSQL: SIGKILL at the n-th commit after its version bump, before COMMIT
//   --test-hold-after-bump ms     PostgreSQL: hold every commit open this long after its version bump
//   --test-no-notify              PostgreSQL: never NOTIFY (instances learn of writes by polling)
//   --test-work-log               one stdout line per budgeted scan: `colloquy-work <kind> <spent> <budget>`
import { runCommandLine } from '@colloquy/server'
import { hostOf } from '../../packages/core/dist/host.js'
import { TestControls } from './test-controls.mjs'

const VALUED = new Set([
  '--test-crash-before-commit',
  '--test-crash-at-commit',
  '--test-crash-before-flush',
  '--test-crash-after-bump',
  '--test-hold-after-bump',
])
const SWITCHES = new Set(['--test-clock', '--test-no-notify', '--test-work-log'])

const given = new Map()
const rest = []
const argv = process.argv.slice(2)
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i]
  if (SWITCHES.has(arg)) given.set(arg, true)
  else if (VALUED.has(arg)) {
    const value = argv[++i]
    if (value === undefined || !/^\d+$/.test(value)) {
      process.stderr.write(`test-server: ${arg} expects a non-negative integer, got ${value}\n`)
      process.exit(2)
    }
    given.set(arg, Number(value))
  } else rest.push(arg)
}

/** A commit hook that kills this process, as a power cut would, at the n-th commit. */
const killAt = (flag) =>
  given.has(flag) ? (n) => void (n === given.get(flag) && process.kill(process.pid, 'SIGKILL')) : undefined
const hold = given.get('--test-hold-after-bump') ?? 0
const crashAfterBump = killAt('--test-crash-after-bump')
const controls = given.has('--test-clock') ? new TestControls() : undefined

await runCommandLine(rest, {
  fileStorage: {
    beforeCommitPoint: killAt('--test-crash-before-commit'),
    afterCommitPoint: killAt('--test-crash-at-commit'),
    beforeFlush: killAt('--test-crash-before-flush'),
  },
  postgresStorage: {
    notify: !given.has('--test-no-notify'),
    async afterVersionBump(n) {
      crashAfterBump?.(n)
      if (hold) await new Promise((resolve) => setTimeout(resolve, hold))
    },
  },
  server: {
    ...(controls && { now: controls.now, newId: controls.newId }),
    ...(given.has('--test-work-log') && {
      onWork: (kind, spent, budget) =>
        void process.stdout.write(`colloquy-work ${kind} ${spent} ${budget}\n`),
    }),
  },
  beforeListen(server) {
    if (controls)
      controls.install(server.app, async () => {
        await server.store.flush()
        await Promise.all(
          [...hostOf(server.store).heads()].map((head) =>
            server.store.delete({ session_id: head.meta.session_id }),
          ),
        )
      })
  },
})
