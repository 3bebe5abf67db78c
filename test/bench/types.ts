/**
 * A benchmark workload. The runner (`pnpm bench`) bundles every workload into one page, runs
 * them in headless Chromium (or in Node for server workloads), prints one table and writes
 * `test/bench/results.json`.
 */
export interface BenchRow {
  /** Workload id and subject, e.g. `W1` / `colloquy`, `W1` / `raw idb`. */
  id: string
  subject: string
  metric: string
  value: number
  unit: string
  /** Subject this row is compared with (same id and metric), for the ratio column. */
  baseline?: string
  /** Which direction is better for this metric (time: lower, throughput: higher). */
  better?: 'lower' | 'higher'
  /** Human-readable target, e.g. `>= 0.7x raw idb`. */
  target?: string
  /** Whether the target is met, when this row carries one. */
  pass?: boolean
  note?: string
  /** value / the baseline row's value; filled in by the runner. */
  ratio?: number
}

export interface BenchContext {
  /** Fresh, unique database name for one run of one subject. */
  dbName(label: string): string
  log(message: string): void
  /**
   * A setting of this workload: an environment variable of the runner named after its id
   * (`W9_SIZES` for W9), in the page as in Node.
   */
  env?(name: string): string | undefined
}

export interface Workload {
  id: string
  title: string
  /** Where it runs: `browser` (headless Chromium page) or `node`. */
  env: 'browser' | 'node'
  run(ctx: BenchContext): Promise<BenchRow[]>
}
