import { createStore } from '@colloquy/core'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { postgresStorage } from '../../packages/server/src/storage/postgres/storage.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'
import { sentStatements } from './sent-statements.js'

// A commit's events are kept for other instances' live sockets (`colloquy_events`); old ones are
// deleted now and then (one commit in 256), not by every commit: that delete is a round trip.
let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

it('old events are deleted by one commit in 256, not by each', async () => {
  const pool = new pg.Pool({ connectionString: await cluster.createDatabase(), max: 3 })
  const store = await createStore({ storage: postgresStorage({ pool, pollMs: 60_000 }), multiTab: false })
  const sent = sentStatements(pool)
  try {
    const { session_id } = await store.create({ title: 'events' })
    for (let i = 0; i < 20; i++)
      await store.append({
        session_id,
        message: { role: 'user', content: [{ type: 'text', text: `m${i}` }], timestamp: i },
      })
    // The commits did keep events (what the delete is for).
    expect(sent.filter((q) => q.includes('INSERT INTO colloquy_events')).length).toBeGreaterThan(0)
    expect(sent.filter((q) => q.includes('DELETE FROM colloquy_events')).length).toBeLessThanOrEqual(1)
  } finally {
    await store.close()
    await pool.end()
  }
})
