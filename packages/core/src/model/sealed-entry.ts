import { SessionError } from './errors.js'
import type { Role, SessionEntry } from './model.js'

// An entry of an encrypted store held as it is stored, before anything read its content: its
// clear fields (id, parent, kind, role, timestamp, revision: the tree and the list filters need
// nothing else) and the stored record whose box holds the rest. A session of 10,000 entries is
// loaded this way and only what a read returns is opened (W4). The content fields throw: a
// reader that did not ask for them to be opened fails loudly instead of seeing an empty message
// (`isUnopened` tells that failure apart, so a read can open what it touched and run again).

const RECORD = Symbol('sealed record')

/** What a held sealed entry keeps of its stored form (`crypto/sealed-records.ts`'s `SealedEntry`). */
export interface SealedRecord {
  readonly id: string
  readonly parent_id: string | null
  readonly timestamp: number
  readonly revision: number
  readonly kind: 'message' | 'custom'
  readonly role?: Role
  /** The attachments its content references (clear, bound in the box: docs/encryption.md). */
  readonly attachment_ids?: readonly string[]
  /** Base64 text, or bytes at rest (`validation/sealed-records.ts`'s `EntryBox`). */
  readonly box: string | ArrayBuffer
}

const unopenedErrors = new WeakSet<object>()

/** The error a held sealed entry's content throws (see `isUnopened`). */
function unopened(id: string): never {
  const e = new SessionError('session/storage', `entry ${id} was read before it was opened`)
  unopenedErrors.add(e)
  throw e
}

/** Whether `error` is a read of a sealed entry's content that nothing opened first. */
export const isUnopened = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && unopenedErrors.has(error)

/**
 * A held sealed entry: its clear fields own, its content fields getters on the prototype that
 * throw, and so does `toJSON` (a serialized copy would silently lack the content). A class, not
 * a literal with getters of its own: made 10,000 at a time when a session loads, the literal
 * costs 30 times as much (about 30 ms against 1 ms in Node).
 */
class HeldSealed {
  readonly id: string
  readonly parent_id: string | null
  readonly timestamp: number
  readonly revision: number
  readonly kind: 'message' | 'custom'
  readonly [RECORD]: SealedRecord

  constructor(record: SealedRecord) {
    this.id = record.id
    this.parent_id = record.parent_id
    this.timestamp = record.timestamp
    this.revision = record.revision
    this.kind = record.kind
    this[RECORD] = record
    Object.freeze(this)
  }

  get message(): never {
    return unopened(this.id)
  }
  get origin(): never {
    return unopened(this.id)
  }
  get custom_type(): never {
    return unopened(this.id)
  }
  get data(): never {
    return unopened(this.id)
  }
  toJSON(): never {
    return unopened(this.id)
  }
}

/** The entry held for a checked stored record: clear fields only; its content throws until opened. */
export const heldSealed = (record: SealedRecord): SessionEntry =>
  new HeldSealed(record) as unknown as SessionEntry

/** The stored record of a held sealed entry; undefined for an opened (or clear) one. */
export const sealedRecordOf = (e: SessionEntry): SealedRecord | undefined =>
  e instanceof HeldSealed ? e[RECORD] : undefined

/** Whether `e` is held sealed (its content not opened). */
export const isHeldSealed = (e: SessionEntry): boolean => e instanceof HeldSealed

/** A message entry's role, which stays clear: read without opening a held sealed entry. */
export const roleOf = (e: SessionEntry & { kind: 'message' }): Role =>
  sealedRecordOf(e)?.role ?? e.message.role
