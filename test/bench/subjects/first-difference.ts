/** Where two values first differ (`path: ours / theirs`), or undefined (both bulk loaders' checks). */
export function firstDifference(a: unknown, b: unknown, path: string): string | undefined {
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
        `${path}.${k}`,
      )
      if (d) return d
    }
    return undefined
  }
  return a === b
    ? undefined
    : `${path}: ${JSON.stringify(a)?.slice(0, 300)} / ${JSON.stringify(b)?.slice(0, 300)}`
}
