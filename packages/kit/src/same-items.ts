/**
 * The identity rule of core's live queries lifted to whole values: the same object, or arrays
 * holding the same objects in the same order. Core keeps unchanged items identical, so a new
 * array with identical items is no change to render.
 */
export function sameItems(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false
  return true
}
