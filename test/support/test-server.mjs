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
//   --test-crash-before-index n   file storage: SIGKILL at a checkpoint at commit n, session files flushed, head index not written
//   --test-crash-after-index n    file storage: ... the head index written, the journal not yet cut back
//   --test-checkpoint-bytes n     file storage: checkpoint once the journal holds n bytes (default 64 MiB)
//   --test-crash-after-bump n     PostgreSQL: SIGKILL at the n-th commit after its version bump, before COMMIT
//   --test-hold-after-bump ms     PostgreSQL: hold every commit open this long after its version bump
//   --test-no-notify              PostgreSQL: never NOTIFY (instances learn of writes by polling)
//   --test-work-log               one stdout line per budgeted scan: `colloquy-work <kind> <spent> <budget>`
//   --test-paged-memory           the memory storage serving heads on demand (`memoryStorage({ paged: true })`)
//   --test-working-set            GET /test/working-set?ids=a,b: the heads the store holds (`held`, and
//                                 for each id asked `holds` and, if held, its head with its `v` in `heads`), and
//                                 on PostgreSQL how many session heads
//                                 the database returned since start (`headRows`), on the file storage
//                                 how many times a session file was read since start (`sessionFileReads`),
//                                 and how many pages of heads the server's code asked its store for (`pageReads`)
import { memoryStorage, runCommandLine } from '@colloquy/server'
import fs from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import { basename } from 'node:path'
import pg from 'pg'
import { hostOf } from '../../packages/core/dist/host.js'
import { TestControls } from './test-controls.mjs'

const VALUED = new Set([
  '--test-crash-before-commit',
  '--test-crash-at-commit',
  '--test-crash-before-flush',
  '--test-crash-before-index',
  '--test-crash-after-index',
  '--test-checkpoint-bytes',
  '--test-crash-after-bump',
  '--test-hold-after-bump',
])
const SWITCHES = new Set([
  '--test-clock',
  '--test-no-notify',
  '--test-work-log',
  '--test-paged-memory',
  '--test-working-set',
])

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

/**
 * Session files read (`readFile` of a `<slug>+<sha256>.jsonl` name, how the file storage reads
 * one whole), counted at the call itself: the storage's named import is a live binding of the
 * builtin module, which `syncBuiltinESMExports` points at the counting wrapper.
 */
let sessionFileReads = 0
if (given.has('--test-working-set')) {
  const readFile = fs.readFile
  fs.readFile = (path, ...rest) => {
    if (typeof path === 'string' && /^[a-z0-9-]{0,32}\+[0-9a-f]{64}\.jsonl$/.test(basename(path)))
      sessionFileReads++
    return readFile(path, ...rest)
  }
  syncBuiltinESMExports()
}

/** A pool counting the session heads (rows of `colloquy_sessions`) its statements return. */
let headRows = 0
const postgresUrl = rest.includes('--postgres') ? rest[rest.indexOf('--postgres') + 1] : undefined
const pool =
  given.has('--test-working-set') && postgresUrl ? new pg.Pool({ connectionString: postgresUrl }) : undefined
if (pool) {
  const query = pool.query.bind(pool)
  pool.query = async (...args) => {
    const r = await query(...args)
    for (const row of r.rows ?? [])
      if (row && typeof row === 'object' && 'meta' in row && 'v' in row && !('seq' in row)) headRows++
    return r
  }
}

await runCommandLine(rest, {
  fileStorage: {
    beforeCommitPoint: killAt('--test-crash-before-commit'),
    afterCommitPoint: killAt('--test-crash-at-commit'),
    beforeFlush: killAt('--test-crash-before-flush'),
    beforeIndexWrite: killAt('--test-crash-before-index'),
    afterIndexWrite: killAt('--test-crash-after-index'),
    ...(given.has('--test-checkpoint-bytes') && { checkpointBytes: given.get('--test-checkpoint-bytes') }),
  },
  postgresStorage: {
    ...(pool && { pool }),
    notify: !given.has('--test-no-notify'),
    async afterVersionBump(n) {
      crashAfterBump?.(n)
      if (hold) await new Promise((resolve) => setTimeout(resolve, hold))
    },
  },
  server: {
    ...(given.has('--test-paged-memory') && { storage: memoryStorage({ paged: true }) }),
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
        // Every session, held in memory or not (a store over paged reads holds a working set).
        const ids = []
        for await (const head of hostOf(server.store).everyHead()) ids.push(head.meta.session_id)
        await Promise.all(ids.map((session_id) => server.store.delete({ session_id })))
      })
    let pageReads = 0
    if (given.has('--test-working-set')) {
      // The pages the server's own code reads through the store's host (the one object per store
      // every caller gets from `hostOf`), counted at the call.
      const host = hostOf(server.store)
      const page = host.page
      host.page = (query) => (pageReads++, page(query))
    }
    if (given.has('--test-working-set'))
      server.app.get('/test/working-set', async (c) => {
        await server.store.flush()
        const host = hostOf(server.store)
        const ids = (c.req.query('ids') ?? '').split(',').filter(Boolean)
        return c.json({
          allHeld: host.allHeld,
          held: [...host.heads()].length,
          holds: Object.fromEntries(ids.map((id) => [id, host.has(id)])),
          heads: Object.fromEntries(ids.map((id) => [id, host.head(id) ?? null])),
          headRows,
          sessionFileReads,
          pageReads,
        })
      })
  },
})
