import 'fake-indexeddb/auto'
import { indexedDbStorage } from '@colloquy/core'
import { storeFactory } from './store-client.js'
import { conformanceSuite } from './suite.js'

// A fresh database per test, so no test sees another's sessions.
let n = 0
conformanceSuite(
  'conformance over fake-indexeddb',
  storeFactory(() => ({ storage: indexedDbStorage({ name: `conformance-${process.pid}-${++n}` }) })),
)
