import type { IdKind } from '@colloquy/core'

/**
 * The contract's test clock and ids for running the conformance suite against a real server:
 * the clock starts at 1000000 and moves only when told (`POST /test/clock`), ids are sequential
 * per kind (`s_001`, `e_001`). Only a server started in test mode has them.
 */
export class TestControls {
  private t = 1_000_000
  private counters = { session: 0, entry: 0, attachment: 0 }

  readonly now = (): number => this.t
  readonly newId = (kind: IdKind): string => `${kind[0]}_${String(++this.counters[kind]).padStart(3, '0')}`

  setClock(input: { now?: unknown; advance?: unknown }): number {
    if (typeof input.now === 'number' && Number.isSafeInteger(input.now)) this.t = input.now
    if (typeof input.advance === 'number' && Number.isSafeInteger(input.advance)) this.t += input.advance
    return this.t
  }

  reset(): void {
    this.t = 1_000_000
    this.counters = { session: 0, entry: 0, attachment: 0 }
  }
}
