import { memoryStorage } from '@colloquy/core'
import { storeFactory } from './store-client.js'
import { conformanceSuite } from './suite.js'

conformanceSuite(
  'conformance over memoryStorage',
  storeFactory(() => ({ storage: memoryStorage() })),
)
