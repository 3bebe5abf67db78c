import type { SessionEntry, SessionTree } from '../src/index.js'
import { describe, expect, it } from 'vitest'
import { newestLeafUnder } from '../src/index.js'

/** A tree from `[id, parent, timestamp]` rows, children in row order. */
function treeOf(rows: Array<[string, string | null, number]>): SessionTree {
  const entries = new Map<string, SessionEntry>()
  const children = new Map<string | null, string[]>()
  for (const [id, parent_id, timestamp] of rows) {
    entries.set(id, { id, parent_id, timestamp, revision: 0, kind: 'custom', custom_type: 't', data: null })
    children.set(parent_id, [...(children.get(parent_id) ?? []), id])
  }
  return { active_leaf: null, entries, children }
}

describe('newestLeafUnder', () => {
  it('is the entry itself when it has no children', () => {
    expect(newestLeafUnder(treeOf([['a', null, 1]]), 'a')).toBe('a')
  })

  it('descends into the child with the highest timestamp at every level', () => {
    const tree = treeOf([
      ['a', null, 1],
      ['b1', 'a', 5],
      ['b2', 'a', 3],
      ['c1', 'b1', 6],
      ['c2', 'b1', 9],
      ['d', 'c2', 10],
      ['x', 'b2', 99],
    ])
    // b2's subtree holds the newest entry overall, but b1 is the newer child of a.
    expect(newestLeafUnder(tree, 'a')).toBe('d')
    expect(newestLeafUnder(tree, 'b2')).toBe('x')
  })

  it('breaks a timestamp tie by the later child in children order', () => {
    const tree = treeOf([
      ['a', null, 1],
      ['b1', 'a', 2],
      ['b2', 'a', 2],
      ['b3', 'a', 1],
    ])
    expect(newestLeafUnder(tree, 'a')).toBe('b2')
  })
})
