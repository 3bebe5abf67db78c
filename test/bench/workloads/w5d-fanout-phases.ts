import type { BenchRow, Workload } from '../types.js'
import { fanoutSubjects, runFanout, type Phases } from '../subjects/fanout.js'
import { median } from '../subjects/measure.js'

const REPEATS = 30
const ROUNDS = 3

/**
 * W5D: where W5's time goes (a diagnosis, no target). W5's setup and loop with raw idb, Colloquy
 * and Dexie, each twice: as W5 runs them, and warmed (three awaited writes to a session no query
 * watches right before each timed append). Each timed append's first read-write transaction is
 * timed: from the call to its creation, its life to `complete`, and from `complete` to the
 * emission (raw idb: to the write settling). IndexedDB's `transaction` is wrapped for the run.
 */
const w5d: Workload = {
  id: 'W5D',
  title: 'W5 by phase, cold and warm',
  env: 'browser',
  async run(ctx) {
    const subjects = fanoutSubjects(ctx, REPEATS)
    const open = (['raw idb', 'colloquy', 'dexie'] as const).flatMap((name) => [
      [name, subjects[name], false] as const,
      [`${name} warm`, subjects[name], true] as const,
    ])
    const { series, failed, phases } = await runFanout(ctx, open, {
      rounds: ROUNDS,
      repeats: REPEATS,
      phases: true,
    })
    const rows: BenchRow[] = []
    const shown: Array<[string, string]> = [
      ['raw idb committed, stamped', 'raw idb stamped, to its commit'],
      ['colloquy', 'colloquy, emits after the commit'],
      ['dexie', 'dexie, may emit before the commit'],
    ]
    for (const warm of [false, true]) {
      for (const [cold, what] of shown) {
        const name = warm ? `${cold} warm` : cold
        const sr = series.get(name)
        const p: Phases | undefined = phases.get(name)
        if (!sr || !p) continue
        const row = (metric: string, value: number, note: string): void =>
          void rows.push({
            id: 'W5D',
            subject: name,
            metric,
            value,
            unit: 'ms',
            better: 'lower',
            note: `${what}${warm ? ', warmed' : ''}; ${note}`,
          })
        row(
          'append -> emission',
          median(sr.rounds),
          `median of ${ROUNDS} rounds of ${REPEATS}: ${sr.rounds.map((v) => +v.toPrecision(3)).join(', ')}`,
        )
        row('call -> transaction created', median(p.pre), `median of ${p.pre.length}`)
        row(
          'transaction life',
          median(p.life),
          `created to complete; median of ${p.life.length}, ${p.life.filter((v) => v > 1.5).length} over 1.5 ms`,
        )
        row(
          'complete -> emission',
          median(p.post),
          `median of ${p.post.length}${median(p.post) < 0 ? ' (negative: emitted before its commit completed)' : ''}`,
        )
      }
    }
    for (const [name, error] of failed)
      rows.push({ id: 'W5D', subject: name, metric: 'error', value: NaN, unit: '', note: error })
    return rows
  },
}

export default w5d
