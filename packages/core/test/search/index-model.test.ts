import fc from 'fast-check'
import { describe, it } from 'vitest'
import { createStore, memoryStorage } from '../../src/index.js'
import { enableSearch } from '../../src/search/index.js'
import { apply, expectIndexEqualsScan, opArb } from './search-model.js'

describe('search index (memory storage)', () => {
  it('equals a brute-force scan after random appends, updates, deletes, forks and branch switches', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 10, maxLength: 60, size: 'max' }),
        fc.boolean(),
        async (ops, early) => {
          const store = await createStore({ storage: memoryStorage(), multiTab: false })
          // Enabled before the writes (it follows commits) or after them (it catches up).
          let search = early ? await enableSearch(store) : undefined
          const half = ops.length >> 1
          for (const [i, op] of ops.entries()) {
            if (!search && i === half) search = await enableSearch(store)
            await apply([store], op, search ?? ({ flush: () => Promise.resolve() } as never))
          }
          search ??= await enableSearch(store)
          await expectIndexEqualsScan(store, search)
          search.close()
          await store.close()
        },
      ),
      { numRuns: 60 },
    )
  })
})
