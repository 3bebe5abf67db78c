import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startPostgres, type TestCluster } from '../support/postgres.js'
import { checkRoutes, fillServer, startWorkingSetServer, workingSet, BOUND } from '../server/working-set.js'

let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

describe('a server on PostgreSQL holds a working set of heads', () => {
  it('restarts over a database of many sessions reading no head, and answers every route for sessions it does not hold', async () => {
    const url = await cluster.createDatabase()
    const fill = { alice: 600, bob: 150 }
    const first = await startWorkingSetServer(['--postgres', url], fill)
    try {
      await fillServer(first.url, fill)
    } finally {
      await first.stop()
    }
    const server = await startWorkingSetServer(['--postgres', url], fill)
    try {
      // Opened (migrations, change feed, quotas) without the database returning a single head.
      expect(await workingSet(server.url)).toMatchObject({ allHeld: false, held: 0, headRows: 0 })
      await checkRoutes(server.url, fill)
      const after = await workingSet(server.url)
      expect(after.held).toBeLessThanOrEqual(BOUND)
    } finally {
      await server.stop()
    }
  }, 300_000)
})
