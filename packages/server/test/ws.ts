import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { WebSocket as WebSocketClass } from 'ws'

// The `ws` client for tests outside this package (test/conformance, test/server, test/bench):
// Node 20 has no global WebSocket, and `ws` is a dependency of this package only. It is loaded
// by file path because the test runner resolves packages with the `browser` condition, which
// would pick ws's browser stub.
const require = createRequire(import.meta.url)
export const WebSocket = require(
  join(dirname(require.resolve('ws/package.json')), 'index.js'),
) as typeof WebSocketClass
export type WebSocket = WebSocketClass
