import { Observable } from 'rxjs'
import type { AttachmentMeta, ListRequest, SessionEntry, SessionMeta } from './model.js'
import { selectSessions } from './ops/select.js'
import { sameItems } from './startup.js'
import type { BranchPosition, DraftState, LiveQueries, SessionTree } from './live.js'

// The live queries besides `messages$`, fetched on first use (an app that only shows a
// transcript never loads them). Each runs on the store's `LiveQueries` (`this`).

const NO_ATTACHMENTS: readonly AttachmentMeta[] = Object.freeze([])

export function session$(this: LiveQueries, session_id: string): Observable<SessionMeta | null> {
  return new Observable((subscriber) => {
    let last: SessionMeta | null | undefined
    return this.watchSession(subscriber, session_id, false, (s) => {
      const meta = s?.head.meta ?? null
      if (meta !== last) subscriber.next((last = meta))
    })
  })
}

/** The session's attachment list (metadata), `null` once the session is gone. */
export function attachments$(this: LiveQueries, session_id: string): Observable<readonly AttachmentMeta[] | null> {
  return new Observable((subscriber) => {
    let last: readonly AttachmentMeta[] | null | undefined
    return this.watchSession(subscriber, session_id, false, (s) => {
      const list = s ? (s.head.attachments ?? NO_ATTACHMENTS) : null
      const same = last === list || (last != null && list !== null && sameItems(last, list))
      if (!same) subscriber.next((last = list))
    })
  })
}

/** The parked composer input; emitted again only when its text or chips changed. */
export function draft$(this: LiveQueries, session_id: string): Observable<DraftState | null> {
  return new Observable((subscriber) => {
    let last: DraftState | null | undefined
    return this.watchSession(subscriber, session_id, false, (s) => {
      const meta = s?.head.meta
      if (!meta) {
        if (last !== null) subscriber.next((last = null))
        return
      }
      const draft = meta.draft ?? null
      const attachments = meta.draft_attachments ?? NO_ATTACHMENTS
      if (last && last.draft === draft && sameItems(last.attachments.map((a) => a.attachment_id), attachments.map((a) => a.attachment_id))) return
      subscriber.next((last = Object.freeze({ draft, attachments })))
    })
  })
}

export function sessions$(this: LiveQueries, req: Omit<ListRequest, 'cursor'> = {}): Observable<SessionMeta[]> {
  return new Observable((subscriber) => {
    let last: SessionMeta[] | undefined
    const emit = (): void => {
      const metas = [...this.engine.state.sessions.values()].map((s) => s.head.meta)
      let list = selectSessions(metas, req)
      if (req.limit != null) list = list.slice(0, Math.max(req.limit, 1))
      if (!last || !sameItems(last, list)) subscriber.next((last = list))
    }
    const stop = this.router.any((c) => {
      for (const ch of c.changes.values()) if (ch.head !== undefined || ch.reloaded) return emit()
    })
    emit()
    return stop
  })
}

export function entry$(this: LiveQueries, session_id: string, entry_id: string): Observable<SessionEntry | null> {
  return new Observable((subscriber) => {
    let last: SessionEntry | null | undefined
    return this.watchSession(
      subscriber,
      session_id,
      true,
      (s) => {
        const entry = s?.entries?.get(entry_id) ?? null
        if (entry !== last) subscriber.next((last = entry))
      },
      entry_id,
    )
  })
}

export function tree$(this: LiveQueries, session_id: string): Observable<SessionTree | null> {
  return new Observable((subscriber) => {
    let last: SessionTree | null | undefined
    return this.watchSession(subscriber, session_id, true, (s, change) => {
      if (!s?.entries) {
        if (last !== null) subscriber.next((last = null))
        return
      }
      const structural = !change || change.reloaded || change.added.length > 0 || change.updated.length > 0
      if (last && !structural && last.active_leaf === s.head.leaf) return
      const children = new Map<string | null, readonly string[]>()
      for (const [k, v] of s.children!) children.set(k, Object.freeze([...v]))
      subscriber.next((last = Object.freeze({ active_leaf: s.head.leaf, entries: new Map(s.entries), children })))
    })
  })
}

/**
 * An entry's place among its siblings, for a "2 / 3" picker: emits again only when a sibling
 * is added (streaming into any message never wakes it). `null` while the entry is unknown.
 */
export function branch$(this: LiveQueries, session_id: string, entry_id: string): Observable<BranchPosition | null> {
  return new Observable((subscriber) => {
    let last: BranchPosition | null | undefined
    return this.watchSession(subscriber, session_id, true, (s, change) => {
      if (last !== undefined && change && !change.reloaded && change.head !== null && change.added.length === 0) return
      const entry = s?.entries?.get(entry_id)
      const siblings = entry ? (s!.children!.get(entry.parent_id) ?? [entry_id]) : undefined
      const next = siblings ? { index: siblings.indexOf(entry_id), count: siblings.length, siblings: Object.freeze([...siblings]) } : null
      if (next === null ? last !== null : !last || !sameItems(last.siblings, next.siblings)) subscriber.next((last = next))
    })
  })
}
