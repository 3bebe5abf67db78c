/**
 * A request's work budget. Scans whose cost the caller controls (a query's length, a title's
 * length, how many sessions match) count what they do in units, roughly one character looked
 * at or one item compared, and stop before a step the budget cannot afford, so no request holds
 * the event loop past its budget whatever it asks (see the README's "Limits").
 */
export class WorkMeter {
  /** Units spent so far; never more than `budget`. */
  spent = 0

  constructor(readonly budget: number) {}

  get remaining(): number {
    return this.budget - this.spent
  }

  /** Spends `units` if the budget affords them; false (nothing spent) if it does not. */
  take(units: number): boolean {
    if (units > this.budget - this.spent) return false
    this.spent += units
    return true
  }
}

/**
 * What one `session::list` may spend comparing its metadata filter (see `WorkMeter`): a session
 * pays a unit per value the filter's first key holds (at any depth; a scalar is free) and, once
 * that key matched, a unit per further key and per value it holds; each is about 0.1–0.5 µs. A
 * filter of scalar keys costs only its further keys, and only for sessions matching its first
 * key (with tenancy, the owner): a three-key filter over 50,000 of one's sessions fits. Past it
 * the request is refused (`session/invalid_request`: narrow the filter), never half answered.
 */
export const LIST_WORK_BUDGET = 100_000
