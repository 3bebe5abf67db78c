import type { EventEnvelope, SessionEntry } from '../model/model.js'
import type { SessionState, State } from './state.js'
import type { SessionHead } from '../storage/seam.js'

/** What one commit changed in one session, as live queries and the relay need it. */
export interface SessionChange {
  readonly session_id: string
  /** The new head; `null` when the session was deleted; `undefined` when only entries changed. */
  readonly head: SessionHead | null | undefined
  readonly added: readonly SessionEntry[]
  readonly updated: readonly SessionEntry[]
  /** The whole session was replaced from storage: derive everything again. */
  readonly reloaded: boolean
}

export type ChangeSource = 'local' | 'tab' | 'remote'

/** A committed batch: its changes and the events it fired, whoever made it. */
export interface Commit {
  readonly source: ChangeSource
  readonly changes: ReadonlyMap<string, SessionChange>
  readonly events: readonly EventEnvelope[]
}

/** The writes of a commit in transferable form: what the relay posts and `applyChanges` takes. */
export interface ChangePayload {
  readonly deleted: readonly string[]
  readonly heads: readonly SessionHead[]
  readonly entries: ReadonlyArray<readonly [string, readonly SessionEntry[]]>
}

/**
 * Folds changes into the state: the one place where held state changes. `authoritative` changes
 * (this store's own commits) always win; changes from elsewhere keep the newest head (by `v`)
 * and, per entry, the highest revision.
 */
export function fold(
  state: State,
  payload: ChangePayload,
  authoritative: boolean,
): Map<string, SessionChange> {
  const out = new Map<string, SessionChange>()
  const touch = (id: string, patch: Partial<SessionChange>): void => {
    const prev = out.get(id)
    out.set(
      id,
      prev
        ? { ...prev, ...patch }
        : { session_id: id, head: undefined, added: [], updated: [], reloaded: false, ...patch },
    )
  }
  for (const id of payload.deleted) {
    // A working set (paged reads) announces a deletion of a session it does not hold too: a
    // live list may show it.
    if (state.sessions.delete(id) || authoritative || state.partial) touch(id, { head: null })
  }
  for (const head of payload.heads) {
    const id = head.meta.session_id
    const held = state.sessions.get(id)
    if (!held) {
      // A session new to this store: it has no entries unless the payload brings them all.
      const s: SessionState = { head }
      if (authoritative || head.leaf === null) state.setSession(head, [])
      else state.sessions.set(id, s)
      touch(id, { head })
      continue
    }
    if (!authoritative && head.v <= held.head.v) continue
    // Changes from elsewhere that skip a version mean this copy missed one: forget the entries
    // so they are read again from storage rather than kept incomplete.
    if (!authoritative && held.entries && head.v !== held.head.v + 1) {
      held.entries = undefined
      held.children = undefined
      held.sealed = undefined
      held.head = head
      touch(id, { head, reloaded: true })
      continue
    }
    held.head = head
    touch(id, { head })
  }
  for (const [id, entries] of payload.entries) {
    const s = state.sessions.get(id)
    if (!s?.entries) continue
    const added: SessionEntry[] = []
    const updated: SessionEntry[] = []
    for (const e of entries) {
      const existed = s.entries.has(e.id)
      if (state.putEntry(s, e)) (existed ? updated : added).push(e)
    }
    if (added.length || updated.length) {
      const prev = out.get(id)
      // Copied only when there is something to join (an append: the lists as they are).
      touch(id, {
        added: prev?.added.length ? [...prev.added, ...added] : added,
        updated: prev?.updated.length ? [...prev.updated, ...updated] : updated,
      })
    }
  }
  return out
}
