import { customRandom, urlAlphabet } from 'nanoid'
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
const pooledRandom = (size: number): Uint8Array => {
  if (!pool || drawn + size > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(4096))
    drawn = 0
  }
  return pool.subarray(drawn, (drawn += size))
}
/** nanoid's default: 21 characters of its URL-safe alphabet. */
const nanoid = customRandom(urlAlphabet, 21, pooledRandom)
/** `s_…` / `e_…` / `a_…`. */
export const defaultId = (kind: IdKind): string => `${PREFIX[kind]}_${nanoid()}`
