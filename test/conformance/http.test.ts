import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { failure, httpClient, postJson } from './http-client.js'
import { startServer, type ServerProcess } from './http-process.js'
import { conformanceSuite } from './suite.js'

// The contract's scenarios through the server's HTTP surface: a real `colloquy-server` process
// over its default file storage, in test mode (the contract's clock and ids), reset before
// every scenario.
let server: ServerProcess
let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'colloquy-conformance-'))
  server = await startServer(['--data-dir', dir, '--test-clock'])
})
afterAll(async () => {
  await server?.stop()
  await rm(dir, { recursive: true, force: true })
})

// The server allocates ids itself (s_001, e_001, … from each reset), so the suite's id source is
// not used; its clock is sent to the server before each call that follows a change.
conformanceSuite(
  'conformance over HTTP (colloquy-server)',
  async ({ now }) => {
    const res = await postJson(`${server.url}/test/reset`, {})
    if (!res.ok) throw await failure(res)
    return httpClient(server.url, { now })
  },
  { configurableLimits: false },
)
