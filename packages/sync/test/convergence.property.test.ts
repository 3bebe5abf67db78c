import { describe, it } from 'vitest'
import fc from 'fast-check'
import { action, runScenario } from './scenario.js'

describe('replicas converge', () => {
  it('random interleavings on 2-3 devices with random disconnects end equal to the server, every entry once, revisions maximal', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 3 })
          .chain((n) => fc.tuple(fc.constant(n), fc.array(action(n), { minLength: 5, maxLength: 40 }))),
        ([n, actions]) => runScenario(n, actions),
      ),
      { numRuns: 40 },
    )
  }, 120_000)
})
