import { cryptoSuite } from './crypto-suite.js'

// The page's Web Crypto in Chromium, where a store encrypts.
cryptoSuite()
