/**
 * Token buckets, one per key (a principal): `rate` tokens per second refill a bucket of `burst`.
 * A request takes one token; an empty bucket says how long until the next one (for
 * `Retry-After`). Idle full buckets are forgotten, so memory follows the active principals.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  private sweptAt = 0

  constructor(
    readonly rate: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes a token for `key`: 0 when allowed, else the milliseconds to wait. `rate` 0 disables. */
  take(key: string): number {
    if (this.rate <= 0) return 0
    const t = this.now()
    this.sweep(t)
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: t }
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.rate)
    b.at = t
    this.buckets.set(key, b)
    if (b.tokens >= 1) {
      b.tokens -= 1
      return 0
    }
    return Math.ceil(((1 - b.tokens) / this.rate) * 1000)
  }

  private sweep(t: number): void {
    if (t - this.sweptAt < 60_000) return
    this.sweptAt = t
    const full = (this.burst / this.rate) * 1000
    for (const [k, b] of this.buckets) if (t - b.at > full) this.buckets.delete(k)
  }
}
