import { describe, expect, it } from 'vitest'
import { groupIds, MAX_GROUP } from '../src/row-groups.js'

const ids = (n: number, prefix = 'e_'): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}${(i * 2654435761).toString(36)}`)

describe('groupIds', () => {
  it('cuts a thousand ids into a few dozen groups of at most MAX_GROUP, covering every id in order', () => {
    const list = ids(1000)
    const groups = groupIds(list)
    expect(groups.flat()).toEqual(list)
    expect(groups.every((g) => g.length >= 1 && g.length <= MAX_GROUP)).toBe(true)
    expect(groups.length).toBeGreaterThan(10)
    expect(groups.length).toBeLessThan(100)
    expect(groupIds([])).toEqual([])
  })

  it('boundaries follow the ids: an append or a prepend leaves the other groups identical (same arrays)', () => {
    const list = ids(1000)
    const groups = groupIds(list)
    const appended = groupIds([...list, 'e_new'], groups)
    expect(appended.slice(0, -1)).toEqual(groups.slice(0, -1))
    appended.slice(0, -1).forEach((g, i) => expect(g).toBe(groups[i]))

    const older = ids(300, 'e_old')
    const prepended = groupIds([...older, ...list], groups)
    const reused = prepended.filter((g) => groups.includes(g))
    // Every group but the first old one (which may merge into the seam) is reused as is.
    expect(reused.length).toBeGreaterThanOrEqual(groups.length - 1)
  })

  it('caps a run of ids that never starts a group', () => {
    const same = Array.from({ length: 1000 }, (_, i) => `x${i}`).filter(
      (id) => groupIds(['a', id]).length === 1,
    )
    const groups = groupIds(same)
    expect(groups.flat()).toEqual(same)
    // Without the cap these ids would form one group, which the check below alone would accept.
    expect(same.length).toBeGreaterThan(2 * MAX_GROUP)
    expect(groups.length).toBe(Math.ceil(same.length / MAX_GROUP))
    expect(groups.every((g) => g.length === MAX_GROUP || g === groups.at(-1))).toBe(true)
  })
})
