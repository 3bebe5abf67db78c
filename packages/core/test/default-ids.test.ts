import { describe, expect, it } from 'vitest'
import { defaultId } from '../src/model/ids.js'

// Default ids are nanoid's, drawn from a pool of random bytes refilled 4 kB at a time: ids drawn
// across many refills are well-formed, distinct, and use the whole alphabet at about equal rates.
describe('default ids', () => {
  it('are prefixed nanoid-style ids, distinct across pool refills, every character about equally likely', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) =>
      defaultId(i % 3 === 0 ? 'session' : i % 3 === 1 ? 'entry' : 'attachment'),
    )
    ids.forEach((id, i) => expect(id).toMatch(new RegExp(`^${'sea'[i % 3]}_[A-Za-z0-9_-]{21}$`)))
    expect(new Set(ids).size).toBe(ids.length)
    const counts = new Map<string, number>()
    for (const id of ids) for (const c of id.slice(2)) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(64)
    // 420,000 characters, 6,562.5 expected each: a biased mapping would be far outside ±10%.
    for (const n of counts.values()) expect(Math.abs(n - 6562.5)).toBeLessThan(656)
  })
})
