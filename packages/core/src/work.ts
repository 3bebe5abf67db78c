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
