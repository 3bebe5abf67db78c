import { afterAll, beforeAll } from 'vitest'
import { failure, httpClient, postJson } from '../conformance/http-client.js'
import { startServer, type ServerProcess } from '../conformance/http-process.js'
import { conformanceSuite } from '../conformance/suite.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

// The contract's scenarios through the HTTP surface of a `colloquy-server` process on
// PostgreSQL (test mode, reset before every scenario), exactly as over the file storage.
let cluster: TestCluster
let server: ServerProcess
beforeAll(async () => {
  cluster = await startPostgres()
  // A zero cache: every session idle for a second is read back from the database.
  server = await startServer([
    '--postgres',
    await cluster.createDatabase(),
    '--test-clock',
    '--cache-mb',
    '0',
  ])
})
afterAll(async () => {
  await server?.stop()
  cluster?.stop()
})

conformanceSuite(
  'conformance over HTTP (colloquy-server on PostgreSQL)',
  async ({ now }) => {
    const res = await postJson(`${server.url}/test/reset`, {})
    if (!res.ok) throw await failure(res)
    return httpClient(server.url, { now })
  },
  { configurableLimits: false },
)
