import { afterAll, beforeAll, describe, it } from 'vitest'
import fc from 'fast-check'
import { httpTransport } from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import { action, runScenario, type Backend } from '../../packages/sync/test/scenario.js'
import { pullAll, replica, startServer, type ServerProcess } from '../server/helpers.js'
import { replicaSnapshot } from '../support/replica-snapshot.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

// The sync engine's convergence property with its devices spread over two server processes on
// one PostgreSQL database: device d talks to instance d mod 2 (pushes, pulls and live streams).
let cluster: TestCluster
const instances: ServerProcess[] = []
beforeAll(async () => {
  cluster = await startPostgres()
  const db = await cluster.createDatabase()
  for (let i = 0; i < 2; i++) instances.push(await startServer(['--postgres', db]))
})
afterAll(async () => {
  for (const s of instances) await s.stop()
  cluster?.stop()
})

const backend: Backend = {
  transport: (d) =>
    httpTransport({
      url: instances[d % 2].url,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    }),
  async truth() {
    // What a fresh replica pulls from instance 1: the server's state.
    const store = await replica()
    await store.applyReplica(
      (await pullAll(instances[0].url)).changes.map((c) => c.change),
      { policy: 'pull' },
    )
    const snap = await replicaSnapshot(store)
    await store.close()
    return snap
  },
  close: async () => {},
}

describe('replicas converge across instances', () => {
  it('random interleavings on 2-3 devices over two instances, with disconnects, end equal to the server, every entry once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 3 })
          .chain((n) => fc.tuple(fc.constant(n), fc.array(action(n), { minLength: 5, maxLength: 30 }))),
        ([n, actions]) => runScenario(n, actions, backend),
      ),
      { numRuns: 12 },
    )
  }, 300_000)
})
