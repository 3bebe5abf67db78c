import type { SessionEntry } from '../model/model.js'
import type { State } from './state.js'
import { sealedRecordOf } from '../model/sealed-entry.js'

/**
 * A rough size of an entry in memory: its JSON as UTF-16, plus the maps that hold it. A held
 * sealed entry (not opened) holds its stored record: that is what it weighs, its box as the
 * bytes or text it is (its JSON would spell bytes out as numbers).
 */
export const entryBytes = (e: SessionEntry): number => {
  const r = sealedRecordOf(e)
  if (!r) return JSON.stringify(e).length * 2 + 96
  const { box, ...clear } = r
  return JSON.stringify(clear).length * 2 + (typeof box === 'string' ? box.length * 2 : box.byteLength) + 96
}

/**
 * Which sessions keep their entries in memory, under a byte budget. Sessions are kept in order
 * of last use; when the loaded entries pass the budget, the least recently used sessions idle
 * for at least `idleMs` drop their entries (their heads stay) and are read again from storage
 * on their next access. Recently used ones are never dropped, so an operation or a page that
 * just loaded a session finds it loaded.
 */
export class EntryCache {
  bytes = 0
  private readonly sizes = new Map<string, number>()
  /** Session id → last use (ms), oldest first. */
  private readonly used = new Map<string, number>()

  constructor(
    private readonly state: State,
    readonly budget: number,
    private readonly idleMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  touch(id: string): void {
    this.used.delete(id)
    this.used.set(id, this.now())
  }

  /** The session's entries were (re)loaded: measure them whole. */
  loaded(id: string): void {
    const s = this.state.sessions.get(id)
    let size = 0
    if (s?.entries) for (const e of s.entries.values()) size += entryBytes(e)
    this.set(id, size)
    this.touch(id)
  }

  /** Entries were added to or replaced in a loaded session. */
  grew(id: string, entries: readonly SessionEntry[]): void {
    if (!this.state.sessions.get(id)?.entries) return this.set(id, 0)
    let size = this.sizes.get(id) ?? 0
    for (const e of entries) size += entryBytes(e)
    this.set(id, size)
    this.touch(id)
  }

  /** Held sealed entries of a session were opened: each weighs what it holds now. */
  opened(id: string, before: readonly SessionEntry[], after: readonly SessionEntry[]): void {
    if (!this.state.sessions.get(id)?.entries) return this.set(id, 0)
    let size = this.sizes.get(id) ?? 0
    for (const e of before) size -= entryBytes(e)
    for (const e of after) size += entryBytes(e)
    this.set(id, size)
  }

  forget(id: string): void {
    this.set(id, 0)
    this.used.delete(id)
  }

  /** Drops idle sessions' entries, least recently used first, until under budget. */
  trim(busy: (id: string) => boolean): void {
    if (this.bytes <= this.budget) return
    const idleBefore = this.now() - this.idleMs
    for (const [id, at] of this.used) {
      if (this.bytes <= this.budget || at > idleBefore) return
      if (busy(id)) continue
      const s = this.state.sessions.get(id)
      if (s) {
        s.entries = undefined
        s.children = undefined
        s.sealed = undefined
      }
      this.forget(id)
    }
  }

  private set(id: string, size: number): void {
    this.bytes += size - (this.sizes.get(id) ?? 0)
    if (size) this.sizes.set(id, size)
    else this.sizes.delete(id)
  }
}
