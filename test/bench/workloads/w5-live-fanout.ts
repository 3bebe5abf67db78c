import type { Workload } from '../types.js'
import { fanoutSubjects, runFanout } from '../subjects/fanout.js'
import { median, percentile } from '../subjects/measure.js'
import { compareRows, SUBJECTS, type Measured, type Outcome } from '../subjects/rows.js'

const REPEATS = 20
// Commit times are bimodal (most under 1.2 ms, a third or more at 2-7 ms, raw IndexedDB's as
// much as anyone's) and drift with the browser's background work: with each subject timing its
// 20 appends in a row, one round's median swung from 1.4 to 3.5 ms while the others' did not.
// So every subject is open at once and they take turns append by append (in a shuffled order),
// for 20 appends a round; three rounds on fresh databases, each round's median reported.
const ROUNDS = 3

/**
 * W5: 100 sessions of 20 messages, each watched by a live query (Colloquy `messages$`, Dexie
 * `liveQuery`, RxDB `find().$`); then one append to one session, timed until that session's
 * subscriber emits a result that holds the new message. Repeated 20 times over different
 * sessions; the median is reported. Raw idb has no live query: its row is the bare write.
 */
const w5: Workload = {
  id: 'W5',
  title: 'one append with 100 live messages$ subscribers on 100 sessions',
  env: 'browser',
  async run(ctx) {
    const open = Object.entries(fanoutSubjects(ctx, REPEATS)).map(
      ([name, make]) => [name, make, false] as const,
    )
    const { series, failed } = await runFanout(ctx, open, { rounds: ROUNDS, repeats: REPEATS })
    const outcomes: Partial<Record<Measured, Outcome>> = {}
    for (const s of SUBJECTS) {
      const sr = series.get(s)
      if (failed.has(s)) outcomes[s] = { error: failed.get(s)! }
      else if (sr) outcomes[s] = { values: sr.rounds }
    }
    const p95note = (name: string): string => {
      const all = series.get(name)?.all
      // Commit times are bimodal: how many samples fell in the slow mode says more than a median.
      return all?.length
        ? `; p95 ${percentile(all, 95).toFixed(2)} ms of ${all.length}, ${all.filter((v) => v > 2).length} over 2 ms`
        : ''
    }
    /** An extra series as its own row: the median of its rounds' medians, the rounds listed. */
    const seriesRow = (name: string, note: string, baseline?: string) => {
      const sr = series.get(name)
      if (!sr) return []
      return [
        {
          id: 'W5',
          subject: name,
          metric: 'append -> subscriber emits',
          value: median(sr.rounds),
          unit: 'ms',
          better: 'lower' as const,
          ...(baseline ? { baseline } : {}),
          note: `${note}; median of ${sr.rounds.length} rounds: ${sr.rounds.map((v) => +v.toPrecision(3)).join(', ')}${p95note(name)}`,
        },
      ]
    }
    const clock = crossOriginIsolated ? 'clock 5 µs (cross-origin isolated)' : 'clock 100 µs'
    return [
      ...compareRows(outcomes, {
        id: 'W5',
        metric: 'append -> subscriber emits',
        unit: 'ms',
        better: 'lower',
        ahead: true,
        notes: {
          'raw idb': `bare put transaction, no live query, timed to the put call's return (not its commit: see raw idb committed); each round the median of ${REPEATS}${p95note('raw idb')}`,
          colloquy: `store.append; 100 messages$ subscribers; emits after the commit; each round the median of ${REPEATS}${p95note('colloquy')}; ${clock}`,
          dexie: `table.add; 100 liveQuery subscribers; Dexie 4 applies a pending write to its cached query results (optimistic updates), so it may emit before the commit; each round the median of ${REPEATS}${p95note('dexie')}`,
          rxdb: `collection.insert; 100 find().$ subscribers; each round the median of ${REPEATS}${p95note('rxdb')}`,
        },
      }),
      ...seriesRow(
        'raw idb committed',
        `the raw idb series timed to the transaction's complete event instead of the put call's return: the floor for emitting after the commit`,
      ),
      ...seriesRow(
        'raw idb committed, stamped',
        `raw idb committed with Colloquy's record layout: each put entry carries its session's new version in a store indexed on it (how Colloquy finds a session's head without a second record per commit): the floor for Colloquy emitting after the commit`,
      ),
      ...seriesRow(
        'colloquy optimistic',
        `store.append; 100 messages$({ optimistic: true }) subscribers (an opt-in: emits when the write is handed to IndexedDB, takes it back if the commit fails; events still after the commit); a second store taking its turns with the others; ratio vs Dexie (below 1: ahead)`,
        'dexie',
      ),
    ]
  },
}

export default w5
