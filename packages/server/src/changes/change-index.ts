import {
  changeSession,
  type JsonObject,
  type ReplicaChange,
  type SessionEntry,
  type SessionHead,
} from '@colloquy/core'
import type { WorkMeter } from '@colloquy/core/wire'

/**
 * What a change-log record stands for. A session and each entry keep the position where they
 * first appeared (`created`, `added`), so whatever depends on them (entries on their session,
 * children on their parent, a leaf on its entry) always comes later in the log; their later
 * changes (`meta`, `updated`) and the leaf move to the newest position. Every record is served
 * with the current state of what it names, so one record per key is enough. An attachment is
 * immutable: its record (`attachment`) keeps the position it was put at, which is before any
 * message that references it could commit, so a reader of the log in any page size meets an
 * attachment before its references. Its deletion is a record of its own (`detached`), which
 * replaces it.
 */
export const CHANGE_KINDS = [
  'created',
  'meta',
  'leaf',
  'added',
  'updated',
  'deleted',
  'attachment',
  'detached',
] as const
export type ChangeKind = (typeof CHANGE_KINDS)[number]

/** A change-log record as persisted (the `changes` side store). */
export interface ChangeRecord {
  seq: number
  kind: ChangeKind
  session_id: string
  entry_id?: string
  /** `attachment` and `detached` only. */
  attachment_id?: string
  /** `deleted` only: the metadata as of deletion, so the tombstone stays scoped to its owner. */
  metadata?: JsonObject
}

export interface LiveRecord extends ChangeRecord {
  dead?: boolean
}

interface EntryIndex {
  added: LiveRecord
  updated?: LiveRecord
  /** The newest version committed since this process started (else read from the store). */
  snap?: SessionEntry
}

export interface SessionIndex {
  created: LiveRecord
  meta?: LiveRecord
  leaf?: LiveRecord
  /** Per attachment id, its `attachment` record, or `detached` once deleted. */
  attachments: Map<string, LiveRecord>
  entries: Map<string, EntryIndex>
  /**
   * The newest head committed since this process started; over a storage with paged reads,
   * the head read when the log opened until then (see `ChangeLog.open`).
   */
  head?: SessionHead
}

/** The side-store key of a record: one record per session change kind and per entry change kind. */
export const recordKey = (r: ChangeRecord): string =>
  r.attachment_id !== undefined
    ? `${r.kind}\u0000${r.session_id}\u0001${r.attachment_id}`
    : r.entry_id === undefined
      ? `${r.kind}\u0000${r.session_id}`
      : `${r.kind}\u0000${r.session_id}\u0000${r.entry_id}`

/**
 * The records that carry what a replicated change sets, by key: an entry's (`added`, `updated`),
 * a session's meta (`created`, `meta`), its leaf. Other kinds of change have none here.
 */
export function recordKeysFor(c: ReplicaChange): string[] {
  const key = (kind: ChangeKind, session_id: string, entry_id?: string): string =>
    recordKey({ seq: 0, kind, session_id, ...(entry_id !== undefined && { entry_id }) })
  switch (c.type) {
    case 'entry':
      return [key('added', c.session_id, c.entry.id), key('updated', c.session_id, c.entry.id)]
    case 'meta':
      return [key('created', c.meta.session_id), key('meta', c.meta.session_id)]
    case 'leaf':
      return [key('leaf', c.session_id)]
    default:
      return []
  }
}

/** Every live record of a session (what its deletion supersedes). */
export function* recordsOf(s: SessionIndex): Generator<LiveRecord> {
  yield s.created
  if (s.meta) yield s.meta
  if (s.leaf) yield s.leaf
  yield* s.attachments.values()
  for (const e of s.entries.values()) {
    yield e.added
    if (e.updated) yield e.updated
  }
}

/** The in-memory change log: live records in sequence order plus, per session, where each key is. */
export class ChangeIndex {
  head = 0
  readonly sessions = new Map<string, SessionIndex>()
  readonly tombstones = new Map<string, LiveRecord>()
  private log: LiveRecord[] = []
  private dead = 0

  /** Rebuilds the index from persisted records (any order). */
  load(records: Iterable<ChangeRecord>, head: number): void {
    const sorted = [...records].sort((a, b) => a.seq - b.seq)
    for (const r of sorted) this.add({ ...r })
    this.head = Math.max(head, sorted.length ? sorted[sorted.length - 1].seq : 0)
  }

  /** The newest live record's seq among those carrying what `c` sets (`recordKeysFor`). */
  position(c: ReplicaChange): number | undefined {
    const id = changeSession(c)
    const s = this.sessions.get(id)
    if (!s) return undefined
    // Asked once per mutation of every push: two records at most, no arrays.
    const live = (a: LiveRecord | undefined, b?: LiveRecord): number | undefined => {
      const x = a && !a.dead ? a.seq : undefined
      const y = b && !b.dead ? b.seq : undefined
      return x === undefined ? y : y === undefined ? x : Math.max(x, y)
    }
    switch (c.type) {
      case 'entry': {
        const e = s.entries.get(c.entry.id)
        return e && live(e.added, e.updated)
      }
      case 'meta':
        return live(s.created, s.meta)
      case 'leaf':
        return live(s.leaf)
      default:
        return undefined
    }
  }

  kill(r: LiveRecord): void {
    if (r.dead) return
    r.dead = true
    this.dead++
  }

  /** Appends a record (its seq is above every other) and files it under its key. */
  add(r: LiveRecord, snap?: { head?: SessionHead; entry?: SessionEntry }): void {
    this.log.push(r)
    this.head = Math.max(this.head, r.seq)
    const s = this.sessions.get(r.session_id)
    switch (r.kind) {
      case 'deleted':
        this.tombstones.set(r.session_id, r)
        this.sessions.delete(r.session_id)
        return
      case 'created':
        this.sessions.set(r.session_id, {
          created: r,
          entries: new Map(),
          attachments: new Map(),
          head: snap?.head,
        })
        return
      case 'attachment':
      case 'detached':
        if (!s) throw new Error(`change log: ${r.kind} record for unknown session ${r.session_id}`)
        s.attachments.set(r.attachment_id!, r)
        if (snap?.head) s.head = snap.head
        return
      case 'meta':
      case 'leaf':
        if (!s) throw new Error(`change log: ${r.kind} record for unknown session ${r.session_id}`)
        s[r.kind] = r
        if (snap?.head) s.head = snap.head
        return
      case 'added':
        if (!s) throw new Error(`change log: entry record for unknown session ${r.session_id}`)
        s.entries.set(r.entry_id!, { added: r, snap: snap?.entry })
        return
      case 'updated': {
        const e = s?.entries.get(r.entry_id!)
        if (!e) throw new Error(`change log: update of unknown entry ${r.session_id}/${r.entry_id}`)
        e.updated = r
        if (snap?.entry) e.snap = snap.entry
        return
      }
    }
  }

  /**
   * Live records after `since`, in sequence order, up to `limit` that pass `visible`. The
   * checkpoint is the last record looked at, or the head when the log was read to its end
   * (records skipped as invisible still move it, so a caller never reads them again). Each
   * record looked at costs a unit of `meter`: when it runs out the page ends there, `more: true`,
   * so a principal whose records are few among many others' pages through them in bounded steps.
   */
  scan(
    since: number,
    limit: number,
    visible: (r: LiveRecord) => boolean,
    meter?: WorkMeter,
  ): { records: LiveRecord[]; checkpoint: number; more: boolean } {
    this.compact()
    const log = this.log
    let lo = 0
    let hi = log.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (log[mid].seq <= since) lo = mid + 1
      else hi = mid
    }
    const records: LiveRecord[] = []
    for (let i = lo; i < log.length; i++) {
      if (meter && !meter.take(1))
        return { records, checkpoint: i === lo ? since : log[i - 1].seq, more: true }
      const r = log[i]
      if (r.dead || !visible(r)) continue
      records.push(r)
      if (records.length === limit) {
        let more = false
        for (let j = i + 1; j < log.length && !more; j++) {
          // Out of budget while looking for what is left: say there may be more (the next page may be empty).
          if (meter && !meter.take(1)) return { records, checkpoint: r.seq, more: true }
          more = !log[j].dead
        }
        return { records, checkpoint: more ? r.seq : this.head, more }
      }
    }
    return { records, checkpoint: Math.max(since, this.head), more: false }
  }

  private compact(): void {
    if (this.dead < 1024 || this.dead * 2 < this.log.length) return
    this.log = this.log.filter((r) => !r.dead)
    this.dead = 0
  }
}
