import { MENTION_WORK_BUDGET, WorkMeter } from '@colloquy/core/wire'

/**
 * Work budgets of the scans a request can start whose cost the caller steers (see the README's
 * "Limits", "Work budgets"), in the core's units (about one character or one item looked at).
 * Each is a few milliseconds of event loop on a loaded 2-core machine, so one principal's
 * worst requests leave the others' answered (`npm run bench -- S6`).
 */
export const WORK_BUDGETS = {
  /** `session::mention::search`: the core's budget (past it the answer says `incomplete`). */
  mention: MENTION_WORK_BUDGET,
  /**
   * A sync upload's `reuse=1` search for the same bytes among the caller's sessions: a unit per
   * session and per attachment looked at. Past it the answer is 409 `sync/bytes_needed`, which
   * is always right: the client sends the bytes.
   */
  reuse: 50_000,
  /**
   * A pull page or live-stream backlog page on the file storage: a unit per change-log record
   * looked at (another principal's records are skipped, but looked at). Past it the page ends
   * there with `more: true` and the checkpoint of the last record looked at. (PostgreSQL reads a
   * principal's records through its `(owner, seq)` index: a page costs its `limit`.)
   */
  pull: 20_000,
  /**
   * What a pull or backlog page holds, on either storage, in characters of JSON: 256 KiB, a
   * couple of milliseconds to build and send (each change is encoded once, and the answer is
   * those encodings). A page ends at the change that passes it (a page holds at least one
   * change, however large), with `more: true` (`PageBuilder`); a client reads on from its
   * checkpoint, about 50 MB a second at the default request rate.
   */
  pullChars: 262_144,
  /**
   * Characters of JSON a long piece of work (a pull page, a large commit) builds before it lets
   * the event loop take other requests (`nextTurn`): about a millisecond.
   */
  sliceChars: 32_768,
} as const

export type WorkKind = Exclude<keyof typeof WORK_BUDGETS, 'sliceChars'>

/**
 * Resolves on a later turn of the event loop, after the I/O and timers that are due (other
 * principals' requests among them): what a long piece of work awaits between its slices, so
 * that one request never holds the loop for more than a slice.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Runs the pieces of work given to it one after another, in the order given. Sliced work run
 * concurrently would still fill one turn of the event loop with a slice of each (every
 * immediate due runs in the same turn, so a thousand pieces awaiting `nextTurn` resume
 * together): taking turns keeps a turn to about one slice, however many are under way.
 */
export function oneAtATime(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve()
  return (work) => {
    const run = tail.then(work)
    tail = run.catch(() => {})
    return run
  }
}

/** Told what each budgeted scan spent (metrics; the tests check no scan passes its budget). */
export type WorkReport = (kind: WorkKind, spent: number, budget: number) => void

export class Work {
  constructor(private readonly report?: WorkReport) {}

  /**
   * Runs a scan on a fresh meter of its kind's budget, then reports what it spent (once it
   * settles, for a scan that reads its input from storage as it goes).
   */
  run<T>(kind: WorkKind, scan: (meter: WorkMeter) => T): T {
    const meter = new WorkMeter(WORK_BUDGETS[kind])
    const report = (): void => this.report?.(kind, meter.spent, meter.budget)
    let result: T
    try {
      result = scan(meter)
    } catch (e) {
      report()
      throw e
    }
    if (result instanceof Promise) return result.finally(report) as T
    report()
    return result
  }
}

const unreported = new Work()

/** A service's work budgets; one that was given none runs the same budgets, reporting nothing. */
export const workOf = (service: { readonly work?: Work }): Work => service.work ?? unreported

/**
 * Counts what a large piece of work built (characters of JSON) and lets other requests run
 * (`nextTurn`) once it built a slice's worth (`WORK_BUDGETS.sliceChars`): a large commit (a
 * 1 MB push touching a thousand sessions) is encoded and written in slices, never in one turn of
 * the event loop. It stays one transaction: it holds its storage's lock (or its database
 * transaction) throughout, and the engine shows none of it before it resolves.
 */
export function slicer(): (chars: number) => Promise<void> {
  let since = 0
  return async (chars) => {
    since += chars
    if (since < WORK_BUDGETS.sliceChars) return
    since = 0
    await nextTurn()
  }
}
