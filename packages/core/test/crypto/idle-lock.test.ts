import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { IdleLock, checkLockAfter } from '../../src/storage/sealed/idle-lock.js'
import { SessionError } from '../../src/model/errors.js'

// The inactivity count alone, on fake timers (Date included): when it locks, what it tells the
// other tabs, and what it makes of what they tell it (hostile until checked). Across real tabs:
// encrypted-store.browser.test.ts.

const L = 1000
let locks: number
let told: number[]
let idle: IdleLock
beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 })
  locks = 0
  told = []
  idle = new IdleLock(
    L,
    (at) => told.push(at),
    () => locks++,
  )
})
afterEach(() => {
  idle.stop()
  vi.useRealTimers()
})

describe('IdleLock', () => {
  it('locks once, lockAfter ms after the last use, and tells the other tabs of each use within a tenth of it', () => {
    vi.advanceTimersByTime(400)
    idle.used()
    vi.advanceTimersByTime(50)
    idle.used() // the newer use of the same window is the one told
    expect(told).toEqual([])
    vi.advanceTimersByTime(50)
    expect(told).toEqual([1_000_450])
    vi.advanceTimersByTime(450 + L - 500 - 1) // to 1 ms before 1,000 ms after the last use
    expect(locks).toBe(0)
    vi.advanceTimersByTime(1)
    expect(locks).toBe(1)
    vi.advanceTimersByTime(10 * L)
    expect(locks).toBe(1)
  })

  it("counts another tab's use; a time from the future is taken as now, anything else but a number is ignored", () => {
    vi.advanceTimersByTime(900)
    idle.told(Date.now())
    vi.advanceTimersByTime(L - 1)
    expect(locks).toBe(0)
    // A tab (or a hostile page of the origin) that claims a use far ahead cannot keep it open.
    idle.told(Date.now() + 1e9)
    for (const bad of [NaN, Infinity, '9999999999999', null, { at: 1 }]) idle.told(bad)
    vi.advanceTimersByTime(L - 1)
    expect(locks).toBe(0)
    vi.advanceTimersByTime(1)
    expect(locks).toBe(1)
  })

  it('stopped (locked or closed), it neither locks nor tells; armed again, it counts from then', () => {
    idle.stop()
    idle.used()
    vi.advanceTimersByTime(5 * L)
    expect([locks, told]).toEqual([0, []])
    idle.arm()
    vi.advanceTimersByTime(L - 1)
    expect(locks).toBe(0)
    vi.advanceTimersByTime(1)
    expect(locks).toBe(1)
  })
})

describe('checkLockAfter', () => {
  it('takes whole ms from 100 up, nothing else', () => {
    expect(checkLockAfter(undefined)).toBeUndefined()
    expect(checkLockAfter(100)).toBe(100)
    for (const bad of [99, 0, -1, 1.5, NaN, Infinity, '1000', null])
      expect(() => checkLockAfter(bad)).toThrow(SessionError)
  })
})
