import type { Json, JsonObject } from '@colloquy/core'

// Transcripts are foreign JSON: every field is read through these guards, never trusted by type.

export type Obj = Record<string, unknown>

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
export const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

/** A non-negative integer token count, or undefined (core's `Usage` refuses anything else). */
export const count = (v: unknown): number | undefined => {
  const n = num(v)
  return n !== undefined && n >= 0 ? Math.round(n) : undefined
}

/** ISO-8601 string or epoch number to integer epoch milliseconds; epoch seconds are scaled. */
export function toMs(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.round(v < 1e11 ? v * 1000 : v)
  if (typeof v !== 'string' || v === '') return undefined
  const t = Date.parse(v)
  return Number.isNaN(t) ? undefined : t
}

/** Drops `undefined` values (and keeps everything else) so the result is valid JSON for core. */
export function compact<T extends Obj>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k]
  return o
}

/**
 * Any parsed JSON value as core's `Json`. JSON.parse output already is; this only replaces
 * non-finite numbers and `undefined`, which can appear when importers build values themselves.
 */
export function toJson(v: unknown): Json {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v
  if (typeof v === 'number') return Number.isFinite(v) ? v : null
  if (Array.isArray(v)) return v.map(toJson)
  if (isObj(v)) {
    const out: JsonObject = {}
    for (const k of Object.keys(v)) if (v[k] !== undefined) out[k] = toJson(v[k])
    return out
  }
  return null
}

/**
 * A value straight out of `JSON.parse` as `Json`, without the deep copy `toJson` makes: parsed
 * JSON can hold no `undefined`, function or non-finite number, and copying every tool result
 * of a 50 MB transcript would double the garbage the import leaves to the collector.
 */
export const parsed = (v: unknown): Json => (v === undefined ? null : (v as Json))

/** A JSON string that holds JSON (Codex arguments, shell outputs) decoded; anything else as is. */
export function decodeJsonString(v: unknown): { value: unknown; decoded: boolean } {
  if (typeof v !== 'string') return { value: v, decoded: false }
  const t = v.trimStart()
  if (t[0] !== '{' && t[0] !== '[') return { value: v, decoded: false }
  try {
    return { value: JSON.parse(v) as unknown, decoded: true }
  } catch {
    return { value: v, decoded: false }
  }
}

/** First line of a prompt, shortened: the title when a format has none. */
export function titleFrom(text: string, max = 80): string {
  const line = text.trim().split('\n', 1)[0]?.trim() ?? ''
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

export const iso = (ms: number): string => new Date(ms).toISOString()

/** An object literal with optional fields as a `JsonObject`, the absent ones left out. */
export function defined(o: Record<string, Json | undefined>): JsonObject {
  const out: JsonObject = {}
  for (const k of Object.keys(o)) if (o[k] !== undefined) out[k] = o[k] as Json
  return out
}
