import { indexedDbStorage } from '@colloquy/core'
import { storeFactory } from './store-client.js'
import { conformanceSuite } from './suite.js'

/**
 * Deletes a test's database. The store closes its connection asynchronously, so the delete may
 * report `blocked` first; it still succeeds as soon as that connection is gone.
 */
const dropDatabase = (name: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name)
    request.onsuccess = () => resolve()
    request.onerror = () => reject(request.error)
  })

let n = 0
conformanceSuite(
  'conformance over IndexedDB',
  storeFactory(() => {
    const name = `conformance-${Date.now()}-${++n}`
    return { storage: indexedDbStorage({ name }), cleanup: () => dropDatabase(name) }
  }),
)
