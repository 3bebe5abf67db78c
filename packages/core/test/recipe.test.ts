import { describe } from 'vitest'
import { numberedStore } from './numbered-store.js'
import { recipeSuite } from './recipe-cases.js'

describe('updateMessage with an immer recipe (@colloquy/core/recipe), in memory', () => {
  recipeSuite(numberedStore)
})
