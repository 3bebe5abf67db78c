import type { Store } from '@colloquy/core'

/**
 * Which replies a tab of this browser is writing, kept in the browser's `localStorage`: shared by
 * this browser's tabs, left behind by a tab that crashes, and never carried by sync. A session
 * `working` with no reply lock held is then either a reply this browser's closed tab left (its
 * record is here: mark it interrupted) or another device's reply streaming in over sync (no
 * record here, and no lock here could tell about it: leave it alone).
 */
const records = (): globalThis.Storage | undefined => {
  try {
    return typeof localStorage !== 'undefined' ? localStorage : undefined
  } catch {
    // Storage access denied (an opaque origin, a sandboxed frame).
    return undefined
  }
}

const key = (store: Store, session_id: string): string =>
  `colloquy-reply-writer:${store.storage.name}:${session_id}`

/** Records that a tab of this browser writes a reply into `session_id`; call before setting it `working`. */
export function ownReply(store: Store, session_id: string): void {
  try {
    records()?.setItem(key(store, session_id), '1')
  } catch {
    // Quota exceeded: the reply is then told from another device's only by its lock.
  }
}

/** Forgets it: the reply ended (finished, stopped, failed, or marked interrupted). */
export function disownReply(store: Store, session_id: string): void {
  records()?.removeItem(key(store, session_id))
}

/**
 * True when a tab of this browser was writing the session's reply (or when this browser keeps no
 * records: then no reply can be told apart, and every one counts as this browser's).
 */
export function ownsReply(store: Store, session_id: string): boolean {
  const r = records()
  return r === undefined || r.getItem(key(store, session_id)) !== null
}
