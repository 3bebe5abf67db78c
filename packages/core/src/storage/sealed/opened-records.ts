import type { SessionEntry } from '../../model/model.js'
import { isHeldSealed, sealedRecordOf, type SealedRecord } from '../../model/sealed-entry.js'

// A session read again sealed (a write found its head changed by another tab, and read it from
// disk) would otherwise have every entry opened before sealed once more, and a live list open
// its whole path again. An opened entry is kept instead when the disk still holds exactly the
// record it was opened from or sealed as: the same id, revision, clear fields and box. Equal
// bytes are the same ciphertext, bound to those very clear fields, so they hold that very
// plaintext: nothing to open, nothing to check again. Anything else (a new revision, a box
// rewritten at the same revision by a pull, one byte changed on disk) is held sealed and opened,
// and checked, by the read that needs it. Entries that came in clear from another tab (the
// relay posts plaintext) have no known record here: they are opened again.

/**
 * The stored record an opened entry holds, copied (a storage may hand out records it keeps), and
 * the session it belongs to (a box is bound to it: one moved to another session must not match).
 */
type Known = SealedRecord & { readonly session_id: string }

const copyOf = (session_id: string, r: SealedRecord): Known => ({
  session_id,
  id: r.id,
  parent_id: r.parent_id,
  timestamp: r.timestamp,
  revision: r.revision,
  kind: r.kind,
  ...(r.role !== undefined && { role: r.role }),
  ...(r.attachment_ids !== undefined && { attachment_ids: [...r.attachment_ids] }),
  // Kept as it is: boxes are never changed in place (a write makes a new one, and a storage
  // hands out what it holds or a copy).
  box: r.box,
})

const sameIds = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean => {
  if (a === b) return true
  const x = a ?? []
  const y = b ?? []
  return x.length === y.length && x.every((id, i) => id === y[i])
}

/** The same box: the same text, or the same bytes (a box in one form and one in the other: not known alike). */
const sameBox = (a: string | ArrayBuffer, b: string | ArrayBuffer): boolean => {
  if (typeof a === 'string' || typeof b === 'string') return a === b
  if (a === b) return true
  if (a.byteLength !== b.byteLength) return false
  const x = new Uint8Array(a)
  const y = new Uint8Array(b)
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
  return true
}

const sameRecord = (a: Known, session_id: string, b: SealedRecord): boolean =>
  sameBox(a.box, b.box) &&
  a.session_id === session_id &&
  a.id === b.id &&
  a.revision === b.revision &&
  a.parent_id === b.parent_id &&
  a.timestamp === b.timestamp &&
  a.kind === b.kind &&
  a.role === b.role &&
  sameIds(a.attachment_ids, b.attachment_ids)

/** The records opened entries were opened from or sealed as, in one sealed storage. */
export interface OpenedRecords {
  /** `plain` was opened from, or sealed as, `record` (a checked stored record of `session_id`). */
  note(session_id: string, plain: SessionEntry, record: SealedRecord): void
  /**
   * `fresh` (an entry just read held sealed), or the opened entry of `held` with its id when
   * `fresh`'s record is exactly the one that entry was opened from or sealed as.
   */
  keep(
    session_id: string,
    fresh: SessionEntry,
    held: ReadonlyMap<string, SessionEntry> | undefined,
  ): SessionEntry
}

export function openedRecords(): OpenedRecords {
  // Weak: the engine decides which entries live (a lock drops them all, and these with them).
  const known = new WeakMap<SessionEntry, Known>()
  return {
    note(session_id, plain, record) {
      known.set(plain, copyOf(session_id, record))
    },
    keep(session_id, fresh, held) {
      const prev = held?.get(fresh.id)
      if (!prev || isHeldSealed(prev)) return fresh
      const was = known.get(prev)
      const now = sealedRecordOf(fresh)
      return was && now && sameRecord(was, session_id, now) ? prev : fresh
    },
  }
}
