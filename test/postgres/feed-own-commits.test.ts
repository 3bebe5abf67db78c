import { createStore, type ReplicaChange } from '@colloquy/core'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { PostgresFeed } from '../../packages/server/src/storage/postgres/feed.js'
import { postgresStorage } from '../../packages/server/src/storage/postgres/storage.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'
import { newSessionMeta } from '../support/sync-push.js'

// The live reader of an instance delivers that instance's own commits from memory. A read of the
// log that runs while one of them is under way (the safety poll, a notification, a commit that
// ended before it) reads only below it: it never reads that commit back from the database,
// decoding its heads and entries and folding them into the engine that already holds them.

let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

const READ = 'WITH k AS (SELECT head'

it('a read of the log while this instance commits never reads that commit back; it is delivered once, from memory', async () => {
  const url = await cluster.createDatabase()
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  // While `holding`, the reader's statements wait; the COMMIT of the commit under way runs them
  // once it is done in the database, before its caller sees it: the reader's snapshot then
  // holds that commit, as when its COMMIT reply is read after the reader's statement ran.
  let holding = false
  let failing = false
  const held: Array<() => Promise<void>> = []
  let recordsRead = 0
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown
    ;(client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      const sql = typeof a[0] === 'string' ? a[0] : ''
      if (sql.startsWith(READ)) {
        const done = a[2] as (e: Error | null, r?: pg.QueryResult<{ seq: string | null }>) => void
        const run = () =>
          new Promise<void>((resolve) =>
            query(a[0], a[1], (e: Error | null, r?: pg.QueryResult<{ seq: string | null }>) => {
              recordsRead += r?.rows.filter((row) => row.seq !== null).length ?? 0
              done(e, r)
              resolve()
            }),
          )
        if (!holding) return void run()
        held.push(run)
        return undefined
      }
      if (sql === 'COMMIT' && holding)
        return (async () => {
          const r = await (query(...a) as Promise<unknown>)
          holding = false
          await Promise.all(held.splice(0).map((run) => run()))
          return r
        })()
      return query(...a)
    }
  })
  const storage: ReturnType<typeof postgresStorage> = postgresStorage({
    pool,
    pollMs: 60_000,
    afterVersionBump: () => {
      if (failing) throw new Error('crash before COMMIT')
      if (!holding) return
      // The poll comes now, with the commit's sequence numbers taken, before its COMMIT.
      void (storage.changeFeed() as PostgresFeed).poke(true)
    },
  })
  const feed = storage.changeFeed() as PostgresFeed
  const store = await createStore({ storage, multiTab: false })
  try {
    const delivered: number[] = []
    feed.subscribe((changes) => delivered.push(...changes.map((c) => c.seq)))
    const changes: ReplicaChange[] = Array.from({ length: 20 }, (_, i) => newSessionMeta(`s${i}`, `s${i}`, 1))
    recordsRead = 0
    holding = true
    const results = await store.applyReplica(changes, { policy: 'push' })
    expect(results.every((r) => r.status === 'applied')).toBe(true)
    expect(holding).toBe(false)
    await feed.poke()
    // The reader read none of it, and delivered each of its records once.
    expect(recordsRead).toBe(0)
    expect(delivered.length).toBe(20)
    expect(new Set(delivered).size).toBe(20)
    expect(Math.max(...delivered)).toBe(feed.head)
    // A commit that fails after taking its sequence numbers leaves nothing to wait for: the
    // next one is delivered.
    failing = true
    await expect(
      store.applyReplica([newSessionMeta('failed', 'failed', 1)], { policy: 'push' }),
    ).rejects.toMatchObject({ code: 'session/storage' })
    failing = false
    await store.applyReplica([newSessionMeta('later', 'later', 1)], { policy: 'push' })
    await feed.poke(true)
    expect(delivered.length).toBe(21)
    expect(Math.max(...delivered)).toBe(feed.head)
  } finally {
    await store.close()
    await pool.end()
  }
})
