import { beforeAll, describe, it } from 'vitest'
import fc from 'fast-check'
import { Keyring } from '@colloquy/core/crypto'
import { action, runScenario } from './scenario.js'

// The convergence property with end-to-end encryption on: the server (in process) holds sealed
// sessions only, and every device ends equal to what they open to.
let keyring: Keyring
beforeAll(async () => {
  keyring = await Keyring.create({ passphrase: 'one passphrase for every device' })
})

describe('replicas converge, end-to-end encrypted', () => {
  it('random interleavings on 2-3 devices with random disconnects end equal to the server (opened), every entry once, revisions maximal', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 3 })
          .chain((n) => fc.tuple(fc.constant(n), fc.array(action(n), { minLength: 5, maxLength: 40 }))),
        ([n, actions]) => runScenario(n, actions, undefined, keyring),
      ),
      { numRuns: 25 },
    )
  }, 240_000)
})
