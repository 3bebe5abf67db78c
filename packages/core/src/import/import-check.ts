import { invalid } from '../model/errors.js'
import type { SessionEntry, SessionMeta } from '../model/model.js'
import { parseSessionEntry } from '../validation/records.js'

/**
 * The checks of an imported session, fed one entry at a time: each entry passes the one
 * validator as it comes (its copy is what gets written), and only ids and parent ids are kept,
 * so an import streamed in chunks holds a few dozen bytes per entry, never the entries. The
 * tree checks that need every entry (parents present, no cycle, a leaf that exists) run in
 * `finish`, before the session is made visible.
 */
export class ImportCheck {
  private readonly parents = new Map<string, string | null>()
  private messages = 0
  private latest = -Infinity

  /** Entries checked so far. */
  get size(): number {
    return this.parents.size
  }

  /** Validates one entry (`path` names it in errors: `entries[12]`) and returns the copy to write. */
  entry(raw: unknown, path: string): SessionEntry {
    const e = parseSessionEntry(raw, path)
    if (this.parents.has(e.id)) throw invalid(`entries: duplicate entry id ${e.id}`)
    this.parents.set(e.id, e.parent_id)
    if (e.kind === 'message') this.messages++
    if (e.timestamp > this.latest) this.latest = e.timestamp
    return e
  }

  /**
   * Checks the whole tree and returns the meta as stored: `message_count` counted, `updated_at`
   * the caller's or else the newest entry's time.
   */
  finish(meta: SessionMeta, active_leaf: string | null): { meta: SessionMeta; active_leaf: string | null } {
    // Every chain must reach a root; `state` marks entries proven to (2) or being walked (1).
    const state = new Map<string, 1 | 2>()
    for (const start of this.parents.keys()) {
      const walked: string[] = []
      let id: string | null = start
      while (id !== null && state.get(id) !== 2) {
        if (state.get(id) === 1) throw invalid(`entries: cycle in the parent chain at ${id}`)
        state.set(id, 1)
        walked.push(id)
        const parent: string | null | undefined = this.parents.get(id)
        if (parent === undefined)
          throw invalid(`entries: parent ${id} of ${walked[walked.length - 2]} is missing`)
        id = parent
      }
      for (const w of walked) state.set(w, 2)
    }
    if (active_leaf !== null && !this.parents.has(active_leaf))
      throw invalid(`active_leaf: entry ${active_leaf} is not in the session`)
    const updated_at = meta.updated_at ?? Math.max(meta.created_at, this.latest)
    return { meta: Object.freeze({ ...meta, message_count: this.messages, updated_at }), active_leaf }
  }
}
