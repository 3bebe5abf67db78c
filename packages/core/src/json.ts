import type { Json, JsonObject } from './model.js'

/** Deep JSON equality: the contract's "deeply equal JSON value" (4.3). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    return a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual((a as JsonObject)[k], (b as JsonObject)[k]))
}

/**
 * Metadata subset-equality (contract 4.3): every key of the filter is present in the session's
 * metadata with an equal value. `{}` matches everything, a non-empty filter never matches a
 * session without metadata.
 */
export function metadataMatches(filter: JsonObject | null | undefined, metadata: JsonObject | undefined): boolean {
  if (!filter) return true
  const keys = Object.keys(filter)
  if (keys.length === 0) return true
  if (!metadata) return false
  return keys.every((k) => Object.prototype.hasOwnProperty.call(metadata, k) && jsonEqual(filter[k], metadata[k]))
}

/** Padded standard base64 of UTF-8 JSON: the contract's informative cursor format. */
export function encodeCursor(value: Json): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value))
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary)
}

/** Inverse of `encodeCursor`; undefined for anything that is not base64 of a JSON object. */
export function decodeCursor(cursor: string): JsonObject | undefined {
  try {
    const binary = atob(cursor)
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0))
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined
  } catch {
    return undefined
  }
}
