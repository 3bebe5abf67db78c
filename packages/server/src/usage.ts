import type { JsonObject, SessionEntry, SessionHead, SessionMeta, Storage, WriteSet } from '@colloquy/core'
import { pagedHeads } from '@colloquy/core/host'
import { HttpError } from './errors.js'
import { nextTurn, WORK_BUDGETS } from './work.js'

/** Per-principal storage quotas; 0 turns one off. */
export interface Quotas {
  /** Most sessions one principal may hold. */
  maxSessions: number
  /** Most bytes one principal may store (the JSON of its metas and entries, and its attachments' bytes). */
  maxStoredBytes: number
}

interface SessionUsage {
  owner: string | undefined
  /** Bytes of the meta and the head's attachments. */
  meta: number
  /** The meta last counted, and its JSON bytes. */
  counted?: SessionMeta
  metaJson: number
  entries: Map<string, number>
  bytes: number
}

interface OwnerUsage {
  bytes: number
  sessions: number
  /** Admitted by requests still running (so two concurrent writes cannot both slip under). */
  pendingBytes: number
  pendingSessions: number
}

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v))

/**
 * The bytes of each entry a commit wrote, measured in slices (`WORK_BUDGETS.sliceChars`) with
 * other requests let in between: a commit of a thousand entries is not measured in one turn.
 * Counted after the commit and before the write resolves; the request's admitted bytes stay
 * pending meanwhile, so the quota holds.
 */
async function entrySizes(ws: WriteSet): Promise<Map<SessionEntry, number>> {
  const sizes = new Map<SessionEntry, number>()
  let since = 0
  for (const entries of ws.entries.values()) {
    for (const e of entries.values()) {
      const n = size(e)
      sizes.set(e, n)
      since += n
      if (since >= WORK_BUDGETS.sliceChars) {
        since = 0
        await nextTurn()
      }
    }
  }
  return sizes
}

/**
 * `size(next)`, from the size of the meta it replaces when the two differ only in finite
 * numbers (an append moves a meta's count and `updated_at`): a number's JSON is its `String`.
 * Any other difference (a key added or gone, a string or object changed) is measured whole.
 */
function metaSize(prev: SessionMeta | undefined, prevBytes: number, next: SessionMeta): number {
  if (!prev) return size(next)
  const a = prev as unknown as Record<string, unknown>
  const b = next as unknown as Record<string, unknown>
  let bytes = prevBytes
  let keys = 0
  for (const k in b) {
    keys++
    const was = a[k]
    const now = b[k]
    if (was === now) continue
    if (
      typeof was !== 'number' ||
      typeof now !== 'number' ||
      !Number.isFinite(was) ||
      !Number.isFinite(now) ||
      !(k in a)
    )
      return size(next)
    bytes += String(now).length - String(was).length
  }
  for (const _ in a) keys--
  return keys === 0 ? bytes : size(next)
}

/**
 * A storage shared by several instances counts usage itself, from the database: one instance's
 * memory would miss what the others wrote.
 */
export interface UsageSource {
  /** Sessions and bytes `owner` holds (`null`: every session, when tenancy is off). */
  usageOf(owner: string | null): Promise<{ bytes: number; sessions: number }>
  /** Bytes one session holds. */
  sessionBytes(session_id: string): Promise<number>
}

export const hasUsageSource = (s: Storage): s is Storage & UsageSource =>
  typeof (s as Partial<UsageSource>).usageOf === 'function' &&
  typeof (s as Partial<UsageSource>).sessionBytes === 'function'

export const quotaExceeded = (text: string): HttpError =>
  new HttpError(403, 'session/invalid_request', `quota exceeded: ${text}`)

/**
 * What each principal stores: sessions and bytes (the JSON size of every session's meta and
 * current entries). It wraps the storage: counted from the storage itself when it opens (every
 * session is read once), then kept up to date from what every commit writes, so it is the same
 * after a restart. Requests are admitted against the quotas before they run (`admit`), with
 * their body size as the estimate of what they add.
 */
export class Usage {
  readonly storage: Storage
  private readonly sessions = new Map<string, SessionUsage>()
  private readonly owners = new Map<string, OwnerUsage>()
  /** The last commit's accounting (see `transact`). */
  private accounting: Promise<void> = Promise.resolve()

  /**
   * `ownerOf`: the principal a session's metadata charges (all to one when tenancy is off).
   * `source`: where the figures come from when the storage counts them (then `inner` is used
   * as it is, not read at open); `perOwner` false charges everything to one figure.
   */
  constructor(
    inner: Storage,
    private readonly quotas: Quotas,
    private readonly ownerOf: (metadata: JsonObject | undefined) => string | undefined,
    private readonly source?: { usage: UsageSource; perOwner: boolean },
  ) {
    if (source) {
      this.storage = inner
      return
    }
    this.storage = {
      name: inner.name,
      ...(inner.paged && { paged: inner.paged }),
      open: async () => {
        const heads = await inner.open()
        // Over paged reads no head comes with the open: the sessions are counted a page at a
        // time, none kept (a storage that can count for itself is a `UsageSource`).
        for await (const head of inner.paged ? pagedHeads(inner.paged) : heads) {
          const s = this.session(head.meta.session_id)
          this.charge(s, -1)
          this.setHead(s, head)
          // A session the storage cannot read now is counted by its meta until it is written:
          // counting never stops a start.
          const entries = await inner.entries(head.meta.session_id).catch(() => [])
          for (const e of entries) this.setEntry(s, e.id, size(e))
          this.charge(s, +1)
        }
        return heads
      },
      entries: (id) => inner.entries(id),
      transact: async (work) => {
        let written: WriteSet | undefined
        await inner.transact(async (reader) => (written = await work(reader)))
        if (!written) return
        const ws = written
        // Accounted in commit order (each takes turns, and a session's meta size is measured
        // from the one counted before it): queued right as the commit resolves, which is in
        // commit order.
        const accounted = this.accounting.then(async () => this.account(ws, await entrySizes(ws)))
        this.accounting = accounted.catch(() => {})
        await accounted
      },
      // Every optional capability of the storage passes through: a wrapper that dropped one
      // would silently turn it off (attachment bytes, unreadable-session answers).
      attachmentBytes:
        inner.attachmentBytes &&
        ((session_id, attachment_id) => inner.attachmentBytes!(session_id, attachment_id)),
      sideRecords: inner.sideRecords && ((store) => inner.sideRecords!(store)),
      unavailable: inner.unavailable && ((session_id) => inner.unavailable!(session_id)),
      close: () => inner.close(),
    }
  }

  /** What `owner` holds now. */
  of(owner: string): { bytes: number; sessions: number } {
    const o = this.owners.get(owner)
    return { bytes: o?.bytes ?? 0, sessions: o?.sessions ?? 0 }
  }

  /** What `owner` holds now, from the storage's own count when it keeps one. */
  async held(owner: string): Promise<{ bytes: number; sessions: number }> {
    return this.source ? this.source.usage.usageOf(this.source.perOwner ? owner : null) : this.of(owner)
  }

  /** Bytes one session holds (what a fork of it copies at most). */
  async bytesOf(session_id: string): Promise<number> {
    return this.source
      ? this.source.usage.sessionBytes(session_id)
      : (this.sessions.get(session_id)?.bytes ?? 0)
  }

  /**
   * Admits a write that may add `bytes` and `sessions` for `owner`, or throws 403 with nothing
   * written. The returned release ends the reservation once the write has settled. With a
   * shared storage the reservations are this instance's: requests admitted at the same moment
   * on other instances can overshoot a quota by what they carry, never more.
   */
  async admit(owner: string, bytes: number, sessions = 0): Promise<() => void> {
    const { maxSessions, maxStoredBytes } = this.quotas
    const check = (sessions > 0 && maxSessions > 0) || (bytes > 0 && maxStoredBytes > 0)
    const held = check ? await this.held(owner) : { bytes: 0, sessions: 0 }
    // After the await: the check and the reservation below run without a gap.
    const o = this.owner(owner)
    if (maxSessions > 0 && sessions > 0 && held.sessions + o.pendingSessions + sessions > maxSessions) {
      throw quotaExceeded(`at most ${maxSessions} sessions per principal`)
    }
    if (maxStoredBytes > 0 && bytes > 0 && held.bytes + o.pendingBytes + bytes > maxStoredBytes) {
      throw quotaExceeded(`at most ${maxStoredBytes} stored bytes per principal (${held.bytes} stored)`)
    }
    o.pendingBytes += bytes
    o.pendingSessions += sessions
    let done = false
    return () => {
      if (done) return
      done = true
      o.pendingBytes -= bytes
      o.pendingSessions -= sessions
    }
  }

  /**
   * Bytes `owner` may still add (what it holds and what requests in flight reserved counted),
   * `Infinity` without a byte quota: the most of a body worth reading before `admit` refuses it.
   */
  async room(owner: string): Promise<number> {
    const { maxStoredBytes } = this.quotas
    if (maxStoredBytes <= 0) return Infinity
    const held = await this.held(owner)
    return Math.max(0, maxStoredBytes - held.bytes - this.owner(owner).pendingBytes)
  }

  private owner(owner: string): OwnerUsage {
    let o = this.owners.get(owner)
    if (!o) this.owners.set(owner, (o = { bytes: 0, sessions: 0, pendingBytes: 0, pendingSessions: 0 }))
    return o
  }

  private session(id: string): SessionUsage {
    let s = this.sessions.get(id)
    if (!s)
      this.sessions.set(id, (s = { owner: undefined, meta: 0, metaJson: 0, entries: new Map(), bytes: 0 }))
    return s
  }

  /** Adds (+1) or removes (-1) a session's figures from its owner's. */
  private charge(s: SessionUsage, sign: 1 | -1): void {
    if (s.owner === undefined) return
    const o = this.owner(s.owner)
    o.bytes += sign * s.bytes
    o.sessions += sign
  }

  // Sizes change in place (a session's total is never summed again: sessions grow long).
  private setHead(s: SessionUsage, head: SessionHead): void {
    s.owner = this.ownerOf(head.meta.metadata) ?? ''
    // The head lists the session's attachments, so their bytes are counted with it.
    const json = metaSize(s.counted, s.metaJson, head.meta)
    const bytes = json + (head.attachments ?? []).reduce((sum, a) => sum + a.size, 0)
    s.bytes += bytes - s.meta
    s.meta = bytes
    s.counted = head.meta
    s.metaJson = json
  }

  private setEntry(s: SessionUsage, id: string, bytes: number): void {
    s.bytes += bytes - (s.entries.get(id) ?? 0)
    s.entries.set(id, bytes)
  }

  /**
   * A commit's figures, a session at a time, letting other requests run once a slice's worth of
   * metas was measured (`WORK_BUDGETS.sliceChars`; a 1 MB push's thousand metas, each with its
   * metadata, are megabytes of JSON). Meanwhile an owner's figures may hold part of the commit;
   * the request that made it still holds its admitted bytes, so the quota only errs high.
   */
  private async account(ws: WriteSet, sizes: ReadonlyMap<SessionEntry, number>): Promise<void> {
    for (const id of ws.deleted) {
      const s = this.sessions.get(id)
      if (!s) continue
      this.charge(s, -1)
      this.sessions.delete(id)
    }
    const touched = new Set([...ws.heads.keys(), ...ws.entries.keys()])
    let since = 0
    for (const id of touched) {
      const s = this.session(id)
      this.charge(s, -1)
      const head = ws.heads.get(id)
      if (head) this.setHead(s, head)
      for (const e of ws.entries.get(id)?.values() ?? []) this.setEntry(s, e.id, sizes.get(e)!)
      this.charge(s, +1)
      // What measuring the meta may have cost (its JSON, when it was measured whole).
      if (head) since += s.metaJson
      if (since >= WORK_BUDGETS.sliceChars) {
        since = 0
        await nextTurn()
      }
    }
  }
}
