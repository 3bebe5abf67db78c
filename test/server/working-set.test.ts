import { describe, expect, it } from 'vitest'
import { checkRoutes, fillServer, startWorkingSetServer, workingSet, BOUND } from './working-set.js'

describe('a server holding a working set of heads (memory storage serving heads on demand)', () => {
  it('answers list, history, push, pull, tenancy, quota and mentions for sessions it does not hold, within its bound', async () => {
    const fill = { alice: 300, bob: 60 }
    const server = await startWorkingSetServer(['--test-paged-memory'], fill)
    try {
      await fillServer(server.url, fill)
      expect((await workingSet(server.url)).held).toBeLessThanOrEqual(BOUND)
      await checkRoutes(server.url, fill)
    } finally {
      await server.stop()
    }
  }, 180_000)
})
