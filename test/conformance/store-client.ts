import { createStore, type Storage } from '@colloquy/core'
import type { ClientFactory, ConformanceClient } from './client.js'

/** A storage for one test, and what to do with it once the test's store is closed. */
export interface TestStorage {
  storage: Storage
  cleanup?: () => Promise<void>
}

/**
 * A factory that runs the suite against an in-process store. `multiTab` is off: in Node the
 * global BroadcastChannel crosses worker threads, so parallel test files would otherwise relay
 * into each other's stores.
 */
export function storeFactory(open: () => TestStorage): ClientFactory {
  return async ({ now, newId, limits }) => {
    const { storage, cleanup } = open()
    const store = await createStore({ storage, now, newId, limits, multiTab: false })
    const client: ConformanceClient = {
      call: (fn, request) => store.call(fn, request),
      on: (type, config) => store.on(type, config),
      // In-process events are delivered before the operation's promise resolves.
      settle: async () => {},
      async close() {
        await store.close()
        await cleanup?.()
      },
    }
    return client
  }
}
