/**
 * Exponential backoff with full jitter: many clients that lost the same server do not come back
 * in lockstep. `attempt` starts at 1.
 */
export function backoffDelay(attempt: number, baseMs = 500, maxMs = 30_000, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1))
  return Math.round(ceiling / 2 + random() * (ceiling / 2))
}
