import { sameItems } from './same-items.js'

/**
 * Rows of a long list cut into groups, so a framework whose reconciler walks every sibling of an
 * updated row (React clones and bails out each one, in render and in every commit pass) walks a
 * few dozen groups and one group's rows instead of a thousand rows.
 *
 * Boundaries depend on the ids, not on positions (a new group starts at an id whose hash ends in
 * five zero bits, about one in 32, or after `MAX_GROUP` rows): appending, prepending older pages
 * or switching a branch changes only the groups around the change, and since a group is keyed by
 * its first id, the rows of every other group stay mounted where they are.
 */
export const MAX_GROUP = 128

const startsGroup = (id: string): boolean => {
  // FNV-1a over UTF-16 code units: cheap, and spread well enough for nanoid, UUID or ULID ids.
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
  return (h & 31) === 0
}

/** Groups of `ids` in order; a group equal to one of `previous` (same ids) is that same array. */
export function groupIds(
  ids: readonly string[],
  previous: readonly (readonly string[])[] = [],
): readonly (readonly string[])[] {
  const before = new Map(previous.map((g) => [g[0], g]))
  const groups: (readonly string[])[] = []
  let start = 0
  const cut = (end: number): void => {
    const group = ids.slice(start, end)
    const old = before.get(group[0])
    groups.push(old && sameItems(old, group) ? old : group)
    start = end
  }
  for (let i = 1; i < ids.length; i++) if (i - start >= MAX_GROUP || startsGroup(ids[i])) cut(i)
  if (start < ids.length) cut(ids.length)
  return groups
}
