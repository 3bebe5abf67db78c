import { describe, expect, it } from 'vitest'
import { RateLimiter } from '../src/http/rate-limit.js'

describe('RateLimiter (token bucket per key)', () => {
  it('allows a burst, then one request per 1/rate seconds, and says how long to wait', () => {
    let t = 0
    const r = new RateLimiter(2, 3, () => t)
    expect([r.take('a'), r.take('a'), r.take('a')]).toStrictEqual([0, 0, 0])
    expect(r.take('a')).toBe(500)
    expect(r.take('b')).toBe(0)
    t = 499
    const wait = r.take('a')
    expect(wait).toBeGreaterThan(0)
    expect(wait).toBeLessThanOrEqual(2)
    t = 500
    expect(r.take('a')).toBe(0)
    expect(r.take('a')).toBe(500)
    // Refills up to the burst, never beyond it.
    t = 100_000
    expect([r.take('a'), r.take('a'), r.take('a'), r.take('a') > 0]).toStrictEqual([0, 0, 0, true])
  })

  it('rate 0 is unlimited', () => {
    const r = new RateLimiter(0, 1, () => 0)
    for (let i = 0; i < 1000; i++) expect(r.take('a')).toBe(0)
  })
})
