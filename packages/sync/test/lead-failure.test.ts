import { afterEach, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, SessionError, type Storage } from '@colloquy/core'
import { createSync } from '../src/index.js'
import { loopback } from './loopback.js'

// A tab that starts leading reads its cursor first. That read failing (a storage error, a store
// locked at that moment) is a failure like any other of the loop: retried after a backoff, not
// the end of the loop with the tab still counted as leader and every flush waiting for a loop
// that is gone.

const cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

/** `inner`, whose first `failures` reads of the `kv` side store (sync's cursor) fail. */
function failingCursor(inner: Storage, failures: number): Storage & { reads: () => number } {
  let reads = 0
  return {
    ...inner,
    reads: () => reads,
    async sideRecords(store) {
      if (store === 'kv' && reads++ < failures)
        throw new SessionError('session/storage', 'the cursor could not be read')
      return inner.sideRecords!(store)
    },
  }
}

describe('a leader whose cursor cannot be read', () => {
  it('backs off and reads it again; flush ends once it could, with local changes pushed', async () => {
    const server = await loopback()
    const storage = failingCursor(memoryStorage(), 2)
    const store = await createStore({ storage, multiTab: false })
    const sync = createSync(store, { url: 'http://unused', transport: server.transport() })
    cleanup.push(
      () => sync.close(),
      () => store.close(),
      () => server.close(),
    )
    const { session_id } = await store.create({ title: 'made before the cursor could be read' })
    const states: string[] = []
    sync.status$.subscribe((s) => states.push(s.state))
    sync.start()
    await sync.flush()
    expect(storage.reads()).toBeGreaterThanOrEqual(3)
    expect(states).toContain('error')
    expect((await server.store.get({ session_id }))?.meta.title).toBe('made before the cursor could be read')
  }, 20_000)
})
