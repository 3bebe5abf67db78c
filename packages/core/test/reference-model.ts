import type {
  AgentMessage,
  CustomPayload,
  JsonObject,
  ListOrder,
  MessageItem,
  SessionEntry,
  SessionKind,
  SessionMeta,
  SessionStatus,
} from '../src/index.js'

/**
 * A deliberately naive model of the contract's rules (sections 1.9, 2.1-2.15) in plain maps,
 * written from the contract and not from the store's code: the property test runs random
 * operations against both and compares. Ids follow the test stack (s_001, e_001, separate
 * counters); an id is only drawn when an operation needs a new one.
 */
export type Outcome<T> = { ok: T } | { error: string }

interface ModelSession {
  meta: SessionMeta
  leaf: string | null
  entries: Map<string, SessionEntry>
}

const pad = (n: number): string => String(n).padStart(3, '0')

export class ReferenceModel {
  readonly sessions = new Map<string, ModelSession>()
  /** Every id ever created, so reads of deleted sessions can be checked too. */
  readonly everCreated = new Set<string>()
  private s = 0
  private e = 0
  now = 1_000_000

  private newSession = (): string => `s_${pad(++this.s)}`
  private newEntry = (): string => `e_${pad(++this.e)}`

  create(req: {
    title?: string
    metadata?: JsonObject
    kind?: SessionKind
  }): Outcome<{ session_id: string; meta: SessionMeta }> {
    const id = this.newSession()
    const meta: SessionMeta = {
      session_id: id,
      title: req.title ?? '',
      description: '',
      status: 'idle',
      kind: req.kind ?? 'user',
      ...(req.metadata && { metadata: req.metadata }),
      created_at: this.now,
      updated_at: this.now,
      message_count: 0,
    }
    this.sessions.set(id, { meta, leaf: null, entries: new Map() })
    this.everCreated.add(id)
    return { ok: { session_id: id, meta } }
  }

  append(req: {
    session_id: string
    message?: AgentMessage
    custom?: CustomPayload
    parent_id?: string
    entry_id?: string
    origin?: JsonObject
  }): Outcome<{ entry_id: string; parent_id: string | null; timestamp: number }> {
    const s = this.sessions.get(req.session_id)
    if (!s) return { error: 'session/not_found' }
    if ((req.message === undefined) === (req.custom === undefined))
      return { error: 'session/invalid_request' }
    const existing = req.entry_id !== undefined ? s.entries.get(req.entry_id) : undefined
    if (existing)
      return { ok: { entry_id: existing.id, parent_id: existing.parent_id, timestamp: existing.timestamp } }
    if (req.parent_id !== undefined && !s.entries.has(req.parent_id))
      return { error: 'session/parent_not_found' }
    const base = {
      id: req.entry_id ?? this.newEntry(),
      parent_id: req.parent_id ?? s.leaf,
      timestamp: this.now,
      revision: 0,
      ...(req.origin && { origin: req.origin }),
    }
    const entry: SessionEntry = req.message
      ? { ...base, kind: 'message', message: req.message }
      : { ...base, kind: 'custom', custom_type: req.custom!.custom_type, data: req.custom!.data }
    s.entries.set(entry.id, entry)
    s.leaf = entry.id
    s.meta = {
      ...s.meta,
      updated_at: this.now,
      message_count: s.meta.message_count + (entry.kind === 'message' ? 1 : 0),
    }
    return { ok: { entry_id: entry.id, parent_id: entry.parent_id, timestamp: entry.timestamp } }
  }

  appendMany(req: {
    session_id: string
    messages: AgentMessage[]
    parent_id?: string
  }): Outcome<{ entry_ids: string[]; last_entry_id: string }> {
    const s = this.sessions.get(req.session_id)
    if (!s) return { error: 'session/not_found' }
    if (req.messages.length === 0) return { error: 'session/empty_batch' }
    if (req.parent_id !== undefined && !s.entries.has(req.parent_id))
      return { error: 'session/parent_not_found' }
    let parent = req.parent_id ?? s.leaf
    const ids: string[] = []
    for (const message of req.messages) {
      const id = this.newEntry()
      s.entries.set(id, { id, parent_id: parent, timestamp: this.now, revision: 0, kind: 'message', message })
      ids.push(id)
      parent = id
    }
    s.leaf = parent
    s.meta = { ...s.meta, updated_at: this.now, message_count: s.meta.message_count + ids.length }
    return { ok: { entry_ids: ids, last_entry_id: parent! } }
  }

  updateMessage(req: {
    session_id: string
    entry_id: string
    content: AgentMessage['content']
    expected_revision?: number
  }): Outcome<{ updated: boolean; revision: number }> {
    const s = this.sessions.get(req.session_id)
    if (!s) return { error: 'session/not_found' }
    const e = s.entries.get(req.entry_id)
    if (!e) return { error: 'session/entry_not_found' }
    if (e.kind !== 'message') return { error: 'session/invalid_entry_kind' }
    if (req.expected_revision !== undefined && req.expected_revision !== e.revision)
      return { ok: { updated: false, revision: e.revision } }
    s.entries.set(e.id, {
      ...e,
      message: { ...e.message, content: req.content } as AgentMessage,
      revision: e.revision + 1,
    })
    s.meta = { ...s.meta, updated_at: this.now }
    return { ok: { updated: true, revision: e.revision + 1 } }
  }

  setActiveLeaf(req: { session_id: string; entry_id: string }): Outcome<{ active_leaf: string }> {
    const s = this.sessions.get(req.session_id)
    if (!s) return { error: 'session/not_found' }
    if (!s.entries.has(req.entry_id)) return { error: 'session/entry_not_found' }
    s.leaf = req.entry_id
    return { ok: { active_leaf: req.entry_id } }
  }

  setStatus(req: {
    session_id: string
    status: SessionStatus
    reason?: string
  }): Outcome<{ status: SessionStatus; previous_status: SessionStatus }> {
    const s = this.sessions.get(req.session_id)
    if (!s) return { error: 'session/not_found' }
    const previous = s.meta.status
    const reason = req.status === 'idle' ? undefined : req.reason
    if (previous === req.status && s.meta.status_reason === reason)
      return { ok: { status: previous, previous_status: previous } }
    const { status_reason: _old, ...rest } = s.meta
    s.meta = {
      ...rest,
      status: req.status,
      ...(reason !== undefined && { status_reason: reason }),
      updated_at: this.now,
    }
    return { ok: { status: req.status, previous_status: previous } }
  }

  setMeta(req: {
    session_id: string
    title?: string
    metadata?: JsonObject
  }): Outcome<{ meta: SessionMeta }> {
    const s = this.sessions.get(req.session_id)
    if (!s) return { error: 'session/not_found' }
    if (req.title === undefined && req.metadata === undefined) return { ok: { meta: s.meta } }
    s.meta = {
      ...s.meta,
      ...(req.title !== undefined && { title: req.title }),
      ...(req.metadata !== undefined && { metadata: req.metadata }),
      updated_at: this.now,
    }
    return { ok: { meta: s.meta } }
  }

  delete(req: { session_id: string }): Outcome<{ deleted: boolean }> {
    return { ok: { deleted: this.sessions.delete(req.session_id) } }
  }

  fork(req: {
    session_id: string
    entry_id: string
    title?: string
  }): Outcome<{ session_id: string; meta: SessionMeta }> {
    const src = this.sessions.get(req.session_id)
    if (!src) return { error: 'session/not_found' }
    if (!src.entries.has(req.entry_id)) return { error: 'session/entry_not_found' }
    const path = this.chain(src, req.entry_id)
    const id = this.newSession()
    const ids = new Map(path.map((e) => [e.id, this.newEntry()] as const))
    const entries = new Map<string, SessionEntry>()
    for (const e of path) {
      const copy = {
        ...e,
        id: ids.get(e.id)!,
        parent_id: e.parent_id === null ? null : ids.get(e.parent_id)!,
        revision: 0,
      }
      entries.set(copy.id, copy)
    }
    const m = src.meta
    const meta: SessionMeta = {
      session_id: id,
      title: req.title ?? m.title,
      description: m.description,
      status: 'idle',
      kind: m.kind,
      ...(m.metadata && { metadata: m.metadata }),
      forked_from: m.session_id,
      created_at: this.now,
      updated_at: this.now,
      message_count: path.filter((e) => e.kind === 'message').length,
    }
    this.sessions.set(id, { meta, leaf: ids.get(req.entry_id)!, entries })
    this.everCreated.add(id)
    return { ok: { session_id: id, meta } }
  }

  /** Root → leaf along parent_id: the active path when `leaf` is the active leaf. */
  chain(s: ModelSession, leaf: string | null): SessionEntry[] {
    const out: SessionEntry[] = []
    for (let id = leaf; id !== null;) {
      const e = s.entries.get(id)!
      out.push(e)
      id = e.parent_id
    }
    return out.reverse()
  }

  /** `session::messages {include_custom: true}` over the active path. */
  items(session_id: string): MessageItem[] {
    const s = this.sessions.get(session_id)!
    return this.chain(s, s.leaf).map((e) =>
      e.kind === 'message'
        ? { entry_id: e.id, message: e.message, ...(e.origin && { origin: e.origin }) }
        : { entry_id: e.id, custom: { custom_type: e.custom_type, data: e.data } },
    )
  }

  /** `session::list` order (2.4): desc orders reverse the whole (key, session_id) tuple. */
  list(order: ListOrder): string[] {
    const key = (m: SessionMeta): number => (order === 'updated_desc' ? m.updated_at : m.created_at)
    const asc = [...this.sessions.values()]
      .map((s) => s.meta)
      .sort(
        (a, b) => key(a) - key(b) || (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0),
      )
    return (order === 'created_asc' ? asc : asc.reverse()).map((m) => m.session_id)
  }
}
