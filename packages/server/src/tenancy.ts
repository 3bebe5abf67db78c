import { SessionError, type JsonObject, type SessionMeta } from '@colloquy/core'
import { jsonEqual, metadataMatches, type StoreHost } from '@colloquy/core/host'
import type { Principal } from './auth.js'

/** The metadata key naming a session's owner. */
export const OWNER_KEY = 'owner'

/** Where a session stands for a caller. */
export type Standing = 'own' | 'foreign' | 'absent'

/**
 * Scopes every operation to the caller's sessions through `metadata.owner` (the contract's
 * tenancy hook), using the core's `metadataMatches`.
 *
 * Why a check before the operation is enough: operations are checked against the committed
 * state (the head held, or read from the storage when the store holds a working set) and queued
 * right after, and the engine runs its queue in order; a commit landing between the read and the
 * queueing is caught by the guard every call and push carries, which checks the owner again in
 * the commit. A session can
 * only change hands by being deleted (by its owner) and created again, and a creation is only
 * admitted for an id that is absent and not reserved by someone else: the creator reserves it
 * until its creation settles. So anything queued after a successful check runs before any
 * other principal could have created that id; foreign sessions answer exactly like unknown ones.
 */
export class Tenancy {
  private readonly reserved = new Map<string, { principal: Principal; holds: number }>()

  constructor(
    private readonly host: StoreHost,
    readonly key = OWNER_KEY,
  ) {}

  /** The metadata filter of a principal's sessions. */
  filter(principal: Principal): JsonObject {
    return { [this.key]: principal }
  }

  owns(principal: Principal, metadata: JsonObject | undefined): boolean {
    return metadataMatches(this.filter(principal), metadata)
  }

  /** The principal whose sessions these metadata scope to, if any (checked with `owns`). */
  ownerOf(metadata: JsonObject | undefined): Principal | undefined {
    const candidate = metadata?.[this.key]
    return typeof candidate === 'string' && this.owns(candidate, metadata) ? candidate : undefined
  }

  /**
   * Where the session stands for `principal`, its head read from the storage when the store
   * holds only a working set of heads (`StoreHost.read`).
   */
  async standing(principal: Principal, session_id: string): Promise<Standing> {
    return this.standingOf(principal, session_id, (await this.host.read(session_id))?.meta)
  }

  /** The metas of these sessions (undefined: none), read as `standing` reads them, at once. */
  async metas(ids: Iterable<string>): Promise<Map<string, SessionMeta | undefined>> {
    const unique = [...new Set(ids)]
    const heads = await Promise.all(unique.map((id) => this.host.read(id)))
    return new Map(unique.map((id, i) => [id, heads[i]?.meta]))
  }

  /** `standing`, given the session's meta as read (`metas`). */
  standingOf(principal: Principal, session_id: string, meta: SessionMeta | undefined): Standing {
    if (meta) return this.owns(principal, meta.metadata) ? 'own' : 'foreign'
    // An id being created by a queued operation belongs to its creator already.
    const r = this.reserved.get(session_id)
    if (r) return r.principal === principal ? 'own' : 'foreign'
    return 'absent'
  }

  /** Holds an absent id for `principal` until the returned release runs. */
  reserve(principal: Principal, session_id: string): () => void {
    const r = this.reserved.get(session_id)
    if (r && r.principal !== principal)
      throw new Error(`session ${session_id} is reserved by another principal`)
    if (r) r.holds++
    else this.reserved.set(session_id, { principal, holds: 1 })
    let released = false
    return () => {
      if (released) return
      released = true
      const held = this.reserved.get(session_id)!
      if (--held.holds === 0) this.reserved.delete(session_id)
    }
  }

  /** Metadata with the caller as owner; a different owner is refused (the server owns that key). */
  stamp(principal: Principal, metadata: JsonObject | null | undefined): JsonObject {
    if (
      metadata &&
      Object.prototype.hasOwnProperty.call(metadata, this.key) &&
      !jsonEqual(metadata[this.key], principal)
    ) {
      throw new SessionError(
        'session/invalid_request',
        `metadata.${this.key} is set by the server and cannot be changed`,
      )
    }
    return { ...metadata, [this.key]: principal }
  }

  /** A metadata filter narrowed to the caller's sessions; null when it can match none of them. */
  narrow(principal: Principal, filter: JsonObject | null | undefined): JsonObject | null {
    if (
      filter &&
      Object.prototype.hasOwnProperty.call(filter, this.key) &&
      !jsonEqual(filter[this.key], principal)
    )
      return null
    // The owner first: another principal's session fails on its first key, whatever the filter holds.
    return { [this.key]: principal, ...filter }
  }
}

export const notFound = (session_id: string): SessionError =>
  new SessionError('session/not_found', `session ${session_id} not found`)
