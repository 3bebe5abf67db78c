/**
 * Hook arguments compared by value: a canonical JSON text (object keys sorted), so an inline
 * object literal written anew on every render gives the same key and keeps its subscription.
 * The same key names the shared subscription that hooks asking the same question join.
 */
export function queryKey(name: string, args: unknown): string {
  return `${name}:${JSON.stringify(args ?? null, sortKeys)}`
}

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const sorted: Record<string, unknown> = {}
  for (const k of Object.keys(value).sort()) sorted[k] = (value as Record<string, unknown>)[k]
  return sorted
}
