import { afterAll, beforeAll } from 'vitest'
import { sequentialIds } from './client.js'
import { failure, httpClient, postJson } from './http-client.js'
import { startServer, type ServerProcess } from './http-process.js'
import { conformanceSuite } from './suite.js'

// The contract's scenarios through the server's HTTP surface: a real `colloquy-server` process
// in test mode (the contract's clock and ids), reset before every scenario.
let server: ServerProcess
beforeAll(async () => {
  server = await startServer(['--memory', '--test-clock'])
})
afterAll(async () => {
  await server?.stop()
})

conformanceSuite('conformance over HTTP (colloquy-server)', async ({ now, newId }) => {
  // Ids are allocated by the server; the suite's own source must agree with it from s_001.
  void newId
  void sequentialIds
  const res = await postJson(`${server.url}/test/reset`, {})
  if (!res.ok) throw await failure(res)
  return httpClient(server.url, { now })
})
