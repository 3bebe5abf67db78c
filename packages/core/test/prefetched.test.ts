import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage } from '../src/index.js'
import { operations } from '../src/ops/index.js'

// `store.prefetched`: what a page waits for before it may go offline without a service worker.
// Vitest runs each file in a fresh module graph, so nothing here is loaded before a store asks.
const unloaded = (): string[] =>
  Object.entries(operations)
    .filter(([, op]) => op.load)
    .map(([fn]) => fn)

describe('store.prefetched', () => {
  it('is false with prefetching off, and nothing was fetched for it', async () => {
    const lazy = await createStore({ storage: memoryStorage(), multiTab: false, prefetch: false })
    expect(await lazy.prefetched).toBe(false)
    expect(unloaded()).toContain('session::fork')
    await lazy.close()
  })

  it('settles true once every operation loaded on first use is here', async () => {
    expect(unloaded().length).toBeGreaterThan(10)
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    expect(await store.prefetched).toBe(true)
    expect(unloaded()).toStrictEqual([])
    await store.close()
  })

  it('is false when the store closed before the prefetch began', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    await store.close()
    expect(await store.prefetched).toBe(false)
  })
})
