import { filter, firstValueFrom } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { createStore, memoryStorage } from '../src/index.js'

// Node's BroadcastChannel stands for tabs: stores meet on their storages' names, so a memory
// storage, a database of its own, must have a name no other storage has.
describe('memory storages are databases of their own', () => {
  it('a commit is relayed to a store over the same memory storage, never to one over another', async () => {
    const shared = memoryStorage()
    const a = await createStore({ storage: shared, multiTab: true })
    const c = await createStore({ storage: shared, multiTab: true })
    const b = await createStore({ storage: memoryStorage(), multiTab: true })
    const heardByB: string[] = []
    const sub = b.commits$.subscribe((x) => heardByB.push(x.source))
    try {
      for (const title of ['one', 'two']) {
        const heard = firstValueFrom(c.commits$.pipe(filter((x) => x.source === 'tab')))
        await a.create({ title })
        // Relayed to the store over the same data: B, had it shared the name, was posted it too.
        await heard
      }
      expect(heardByB).toEqual([])
      expect((await b.list({})).sessions).toEqual([])
      expect((await a.list({})).sessions).toHaveLength(2)
    } finally {
      sub.unsubscribe()
      for (const s of [a, b, c]) await s.close()
    }
  })
})
