import { urlAlphabet } from 'nanoid'
import type { IdKind } from './context.js'

// The default ids of new sessions, entries and attachments: only operations make them, so they
// are fetched with the first call, not at start.

const PREFIX: Record<IdKind, string> = { session: 's', entry: 'e', attachment: 'a' }
/**
 * Random bytes for ids, drawn from the platform 4 kB at a time: nanoid's browser build asks
 * `crypto.getRandomValues` for every id, and that call costs more than the rest of an id.
 */
let pool: Uint8Array | undefined
let drawn = 0
/**
 * nanoid's default: 21 characters of its 64-character URL-safe alphabet, one random byte each
 * (`& 63`, as nanoid's own `nanoid()` does: 256 is a multiple of 64, so every character is
 * equally likely), read straight from the pool.
 */
const nanoid = (): string => {
  if (!pool || drawn + 21 > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(4096))
    drawn = 0
  }
  let id = ''
  for (let end = drawn + 21; drawn < end; drawn++) id += urlAlphabet[pool[drawn] & 63]
  return id
}
/** `s_…` / `e_…` / `a_…`. */
export const defaultId = (kind: IdKind): string => `${PREFIX[kind]}_${nanoid()}`
