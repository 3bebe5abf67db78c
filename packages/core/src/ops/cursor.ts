import type { Json, JsonObject } from '../model/model.js'

// Paging cursors: only the paged reads (fetched on first use) make or read them.

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
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined
  } catch {
    return undefined
  }
}
