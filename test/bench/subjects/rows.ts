import type { BenchContext, BenchRow } from '../types.js'
import { dropDatabases } from './databases.js'
import { median } from './measure.js'

/** The subjects of the core workloads, in the order they run within a round. */
export const SUBJECTS = ['raw idb', 'colloquy', 'dexie', 'rxdb'] as const
export type Subject = (typeof SUBJECTS)[number]
/**
 * Subjects only some workloads measure, taking turns with the rest: W3's recipe form of Colloquy,
 * and raw idb writing Colloquy's record layout (its indexed stamps), the floor of that layout.
 */
export type Measured = Subject | 'colloquy recipe' | 'raw idb stamped'
const ORDER: readonly Measured[] = [
  'raw idb',
  'raw idb stamped',
  'colloquy',
  'colloquy recipe',
  'dexie',
  'rxdb',
]

export type Outcome = { values: number[] } | { error: string }

const errorText = (e: unknown): string =>
  (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).split('\n')[0]!.slice(0, 300)

/** A subject that threw: logged, and its error's first line returned for its row. */
export function failure(ctx: BenchContext, subject: string, e: unknown): string {
  const text = errorText(e)
  ctx.log(`  ${subject} failed: ${text}`)
  return text
}

/**
 * Runs each subject's measurement `rounds` times. Subjects are interleaved within a round and
 * the order rotates from round to round, so a drifting machine (other processes, the browser's
 * background compaction) hits all of them alike. With `drop`, every database is deleted after
 * each measurement: all databases of an origin share one backing store in Chromium, and data
 * left by one subject would slow the next. A subject that throws is reported as an error and not
 * retried; the others go on.
 */
export async function runRounds(
  ctx: BenchContext,
  rounds: number,
  measure: Partial<Record<Measured, (round: number) => Promise<number>>>,
  options: { drop?: boolean } = {},
): Promise<Partial<Record<Measured, Outcome>>> {
  const out: Partial<Record<Measured, Outcome>> = {}
  // The rotation is over the subjects this workload measures, so one that only some workloads
  // have leaves the others' order as it was.
  const present = ORDER.filter((s) => measure[s])
  for (let r = 0; r < rounds; r++) {
    const order = [...present.slice(r % present.length), ...present.slice(0, r % present.length)]
    for (const s of order) {
      const fn = measure[s]
      const prev = out[s]
      if (!fn || (prev && 'error' in prev)) continue
      try {
        const v = await fn(r)
        if (prev) prev.values.push(v)
        else out[s] = { values: [v] }
        ctx.log(`  ${s} round ${r + 1}/${rounds}: ${v.toFixed(2)}`)
      } catch (e) {
        out[s] = { error: failure(ctx, s, e) }
      }
      if (options.drop) await dropDatabases()
    }
  }
  return out
}

export interface CompareOptions {
  id: string
  metric: string
  unit: string
  better: 'lower' | 'higher'
  /** Colloquy's target against raw idb, as a ratio of the values (e.g. max 1.3 for time). */
  vsRaw?: { max?: number; min?: number; text: string }
  /** Dexie and RxDB rows carry the target "Colloquy ahead". */
  ahead?: boolean
  /** How a value is reduced from rounds (default: median); the note then lists the rounds. */
  reduce?: (values: number[]) => number
  notes?: Partial<Record<Measured, string>>
}

/**
 * One row per subject for one metric. Ratios are value / baseline value in the row's own unit
 * (the runner prints them); Colloquy's baseline is raw idb, Dexie's and RxDB's is Colloquy.
 */
export function compareRows(outcomes: Partial<Record<Measured, Outcome>>, o: CompareOptions): BenchRow[] {
  const reduce = o.reduce ?? median
  const value = (s: Measured): number | undefined => {
    const out = outcomes[s]
    return out && 'values' in out ? reduce(out.values) : undefined
  }
  const c = value('colloquy')
  const raw = value('raw idb')
  const rows: BenchRow[] = []
  for (const s of ORDER) {
    const out = outcomes[s]
    if (!out) continue
    const row: BenchRow = {
      id: o.id,
      subject: s,
      metric: o.metric,
      value: NaN,
      unit: o.unit,
      better: o.better,
    }
    const notes: string[] = []
    if ('error' in out) notes.push(`failed: ${out.error}`)
    else {
      row.value = reduce(out.values)
      const vs = out.values
      // Many short rounds (W1): their range, not each of them.
      const listed =
        vs.length > 8
          ? `${+Math.min(...vs).toPrecision(4)} to ${+Math.max(...vs).toPrecision(4)}`
          : vs.map((v) => +v.toPrecision(4)).join(', ')
      if (vs.length > 1) notes.push(`${o.reduce ? 'from' : 'median of'} ${vs.length} rounds: ${listed}`)
    }
    if (s === 'colloquy' && raw !== undefined) {
      row.baseline = 'raw idb'
      if (o.vsRaw) {
        row.target = o.vsRaw.text
        const ratio = row.value / raw
        row.pass =
          (o.vsRaw.max === undefined || ratio <= o.vsRaw.max) &&
          (o.vsRaw.min === undefined || ratio >= o.vsRaw.min)
      }
    }
    if ((s === 'dexie' || s === 'rxdb') && c !== undefined) {
      row.baseline = 'colloquy'
      if (o.ahead) {
        row.target = 'colloquy ahead'
        // A subject that could not run at all is not a win for anyone: no verdict.
        if (!Number.isNaN(row.value)) row.pass = o.better === 'lower' ? c < row.value : c > row.value
      }
    }
    if (o.notes?.[s]) notes.unshift(o.notes[s]!)
    if (notes.length) row.note = notes.join('; ')
    rows.push(row)
  }
  return rows
}
