import { changeSession, type ReplicaChange, type SideWrite } from '@colloquy/core'
import { jsonEqual, type AppliedOp, type ChangeSource, type Overlay } from '@colloquy/core/host'
import { META_FIELDS } from '@colloquy/core/replica'
import { parentsFirst, type PushMutation } from '@colloquy/core/protocol'

/** The IndexedDB side store the outbox lives in (created by core's schema). */
export const OUTBOX = 'outbox'

/** One outbox record: a change as this replica made it, with when. */
export interface OutboxRecord {
  readonly change: ReplicaChange
  readonly at: number
}

/**
 * The changes one local commit made, in an order a server can apply them: sessions deleted,
 * then metas (a new session exists before its entries), then entries (the draft holds them in
 * the order they were written, parents first), then leaf moves.
 */
export function changesOf(draft: Overlay): ReplicaChange[] {
  const out: ReplicaChange[] = []
  for (const id of draft.deleted) out.push({ type: 'delete', session_id: id })
  const leaves: ReplicaChange[] = []
  for (const [id, head] of draft.heads) {
    const before = draft.deleted.has(id) ? undefined : draft.state.sessions.get(id)?.head
    if (!before) out.push({ type: 'meta', meta: head.meta, create: true })
    if ((before?.leaf ?? null) !== head.leaf)
      leaves.push({ type: 'leaf', session_id: id, entry_id: head.leaf })
    // New attachments go before the entries of this commit (a message may reference them) and
    // before the draft naming them as chips; their bytes are uploaded when the change is pushed.
    const had = before?.attachments ?? []
    if (head.attachments !== had) {
      const now = new Set((head.attachments ?? []).map((a) => a.attachment_id))
      const was = new Set(had.map((a) => a.attachment_id))
      for (const a of head.attachments ?? [])
        if (!was.has(a.attachment_id)) out.push({ type: 'attachment', session_id: id, attachment: a })
      for (const a of had)
        if (!now.has(a.attachment_id))
          leaves.push({ type: 'detach', session_id: id, attachment_id: a.attachment_id })
    }
    if (before && before.meta !== head.meta) {
      // Only what the writer edits travels; counters and updated_at are each replica's own.
      const fields = META_FIELDS.filter((f) => !jsonEqual(before.meta[f], head.meta[f]))
      if (fields.length) out.push({ type: 'meta', meta: head.meta, fields })
    } else if (!before && head.meta.draft_attachments?.length) {
      // A new session's chips name attachments that travel after its creation.
      out.push({ type: 'meta', meta: head.meta, fields: ['draft_attachments'] })
    }
  }
  for (const [id, entries] of draft.entries) {
    const held = draft.deleted.has(id) ? undefined : draft.state.sessions.get(id)?.entries
    for (const entry of entries.values()) {
      const base = held?.get(entry.id)?.revision ?? null
      out.push({ type: 'entry', session_id: id, entry, base_revision: base })
    }
  }
  // Bulk imports bring entries already on disk, in no particular order: parents go first.
  for (const [id, entries] of draft.preloaded) {
    for (const entry of parentsFirst(entries))
      out.push({ type: 'entry', session_id: id, entry, base_revision: null })
  }
  return [...out, ...leaves]
}

/** The side write that queues a change in the outbox (made at `at`). */
export const queued = (change: ReplicaChange, at: number): SideWrite => ({
  store: OUTBOX,
  value: { change, at } satisfies OutboxRecord,
})

/** The commit hook: records every local commit's changes in the outbox, in the same transaction. */
export function outboxHook(now: () => number) {
  return (_applied: readonly AppliedOp[], draft: Overlay, source: ChangeSource): readonly SideWrite[] =>
    source === 'local' ? changesOf(draft).map((change) => queued(change, now())) : []
}

/** One key per thing a change sets: an entry, a session's meta, a session's leaf. */
export const keyOf = (c: Exclude<ReplicaChange, { type: 'delete' }>): string => {
  switch (c.type) {
    case 'entry':
      return `e\u0000${c.session_id}\u0000${c.entry.id}`
    case 'meta':
      return `m\u0000${c.meta.session_id}`
    case 'leaf':
      return `l\u0000${c.session_id}`
    // A put and a later delete of one attachment share a key: only the last is pushed.
    case 'attachment':
      return `a\u0000${c.session_id}\u0000${c.attachment.attachment_id}`
    case 'detach':
      return `a\u0000${c.session_id}\u0000${c.attachment_id}`
    case 'attachments':
      return `A\u0000${c.session_id}`
  }
}

/**
 * The key of what a change sets, for the kinds whose server records a push answer places in the
 * log (an entry, a session's meta, its leaf); undefined for the others.
 */
export const keyed = (c: ReplicaChange): string | undefined =>
  c.type === 'entry' || c.type === 'meta' || c.type === 'leaf' ? keyOf(c) : undefined

/** A push mutation standing for several outbox records (all acknowledged together). */
export interface Coalesced extends PushMutation {
  readonly id: number
  readonly ids: readonly number[]
}

/**
 * Whether a meta change carries the draft's chips. Such a change stays behind the attachments
 * it names (their bytes are uploaded at their own place): merged into an earlier meta change
 * that did not carry chips, it would reach the server ahead of them, so the merge moves to the
 * later place; merged into a creation, the new session would not hold them yet, so it stays apart.
 */
const chips = (c: Extract<ReplicaChange, { type: 'meta' }>): boolean =>
  !c.fields || c.fields.includes('draft_attachments')

/**
 * Collapses outbox records before a push: consecutive versions of one entry become one change
 * based on the first one's base and carrying the last one's content and revision; repeated meta
 * changes of a session keep the last value; a leaf move keeps only the last, in its own place
 * (it may name an entry pushed just before it). A delete is a barrier: nothing before it merges
 * with anything after it.
 */
export function coalesce(records: ReadonlyArray<{ key: number; value: OutboxRecord }>): Coalesced[] {
  const out: Array<{ id: number; ids: number[]; change: ReplicaChange } | undefined> = []
  const open = new Map<string, { at: number; session_id: string }>()
  for (const { key, value } of records) {
    const c = value.change
    if (c.type === 'delete') {
      for (const [k, o] of open) if (o.session_id === c.session_id) open.delete(k)
      out.push({ id: key, ids: [key], change: c })
      continue
    }
    const k = keyOf(c)
    const session_id = changeSession(c)
    const prev = open.has(k) ? out[open.get(k)!.at] : undefined
    if (!prev) {
      open.set(k, { at: out.length, session_id })
      out.push({ id: key, ids: [key], change: c })
    } else if (c.type === 'entry' && prev.change.type === 'entry') {
      prev.ids.push(key)
      prev.change = { ...c, base_revision: prev.change.base_revision }
    } else if (c.type === 'meta' && prev.change.type === 'meta') {
      // Whichever record created the session, the merged change still does; it carries every
      // field either one edited (no list means all of them).
      const p = prev.change
      const fields = p.create || !p.fields || !c.fields ? undefined : [...new Set([...p.fields, ...c.fields])]
      const merged: ReplicaChange = {
        type: 'meta',
        meta: c.meta,
        ...(p.create && { create: true }),
        ...(fields && { fields }),
      }
      if (chips(c) && p.create) {
        // The creation stays first; the chips follow the attachments they name.
        open.set(k, { at: out.length, session_id })
        out.push({ id: key, ids: [key], change: c })
      } else if (chips(c) && !chips(p)) {
        out[open.get(k)!.at] = undefined
        open.set(k, { at: out.length, session_id })
        out.push({ id: key, ids: [...prev.ids, key], change: merged })
      } else {
        prev.ids.push(key)
        prev.change = merged
      }
    } else {
      out[open.get(k)!.at] = undefined
      open.set(k, { at: out.length, session_id })
      out.push({ id: key, ids: [...prev.ids, key], change: c })
    }
  }
  return out.filter((m): m is NonNullable<typeof m> => m !== undefined)
}
