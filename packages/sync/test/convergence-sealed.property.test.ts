import { beforeAll, describe, it } from 'vitest'
import fc from 'fast-check'
import { Keyring } from '@colloquy/core/crypto'
import { action, encryptedStores, runScenario, type Sealed } from './scenario.js'

// The convergence property with end-to-end encryption on: the server (in process) holds sealed
// sessions only, and every device ends equal to what they open to. Devices whose stores are
// clear sync with a keyring given to sync; devices whose stores are encrypted at rest, all with
// the same keyring, sync with their own keys.
const modes: Record<string, Sealed> = {}
beforeAll(async () => {
  modes['clear stores'] = { keyring: await Keyring.create({ passphrase: 'one passphrase for every device' }) }
  modes['encrypted stores'] = await encryptedStores()
})

describe.each([
  ['clear stores', 25],
  ['encrypted stores', 15],
])('replicas converge, end-to-end encrypted (%s)', (mode, numRuns) => {
  it('random interleavings on 2-3 devices with random disconnects end equal to the server (opened), every entry once, revisions maximal, no marker on the server', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 3 })
          .chain((n) => fc.tuple(fc.constant(n), fc.array(action(n), { minLength: 5, maxLength: 40 }))),
        ([n, actions]) => runScenario(n, actions, undefined, modes[mode]),
      ),
      { numRuns },
    )
  }, 240_000)
})
