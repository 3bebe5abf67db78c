import { firstValueFrom } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Storage } from '../src/index.js'
import { operations } from '../src/ops/index.js'

// Prefetching the code fetched on first use must not compete with the first screen: the entries
// the first live queries load come first, the chunks after. Vitest runs each file in a fresh
// module graph, so nothing here is loaded before this file asks for it.
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})
const timers = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0))
}

describe('prefetching after opening', () => {
  it('waits for the entries the first live queries load (subscribed a few tasks after opening), then fetches every operation', async () => {
    const disk = memoryStorage()
    const writer = await createStore({ storage: disk, multiTab: false, prefetch: false })
    const { session_id } = await writer.create({ title: 'T' })
    await writer.append({ session_id, message: user('hello') })
    await writer.close()
    expect(operations['session::fork'].load).toBeTypeOf('function')

    // The same data, with the read of the session's entries held until released.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let reads = 0
    const storage: Storage = {
      ...disk,
      async entries(id) {
        reads++
        await held
        return disk.entries(id)
      },
    }
    const store = await createStore({ storage, multiTab: false })
    // As a framework does: the first live query subscribes a few tasks after the store opened.
    await timers(3)
    const first = firstValueFrom(store.messages$({ session_id }))
    // Had the prefetch started, its fetch of this module would be done once ours is.
    await import('../src/ops/fork.js')
    await timers(20)
    expect(reads).toBe(1)
    // The load is in flight: nothing fetched beside it.
    expect(operations['session::fork'].load).toBeTypeOf('function')
    release()
    expect((await first).map((i) => i.message?.role)).toStrictEqual(['user'])
    await expect
      .poll(() =>
        Object.entries(operations)
          .filter(([, op]) => op.load)
          .map(([fn]) => fn),
      )
      .toStrictEqual([])
    await store.close()
  })
})
