import { cryptoSuite } from './crypto-suite.js'

// Node's Web Crypto (globalThis.crypto.subtle), as a server-side test or a CLI would use it.
cryptoSuite()
