import { describe } from 'vitest'
import { idbStores } from './idb-stores.js'
import { recipeSuite } from './recipe-cases.js'

describe('updateMessage with an immer recipe (@colloquy/core/recipe), on IndexedDB', () => {
  const { dbName, storeOn } = idbStores('recipe')
  const names = new WeakMap<object, string>()
  recipeSuite(
    async () => {
      const name = dbName()
      const store = await storeOn(name)
      names.set(store, name)
      return store
    },
    // Another store on the same database reads the session from disk.
    (store) => storeOn(names.get(store)!),
  )
})
