import type { Draft } from '../draft.js'
import { metas } from '../draft-reads.js'
import type {
  MentionField, MentionGetRequest, MentionGetResponse, MentionItem, MentionSearchRequest, MentionSearchResponse,
  SessionMeta, SessionStatus,
} from '../model.js'

// The `@session` mention provider (contract 7, item 14): a picker's search and a pill's view.

const STATUS_LABEL: Record<SessionStatus, string> = { idle: 'Idle', working: 'Working', done: 'Done', error: 'Error' }
/** Colours and tones a chat UI maps to its palette: quiet when idle, busy, finished, failed. */
const STATUS_COLOR: Record<SessionStatus, string> = { idle: 'gray', working: 'blue', done: 'green', error: 'red' }
const STATUS_TONE: Record<SessionStatus, string> = { idle: 'neutral', working: 'info', done: 'success', error: 'danger' }

const label = (m: SessionMeta): string => m.title.trim() || 'Untitled session'
const parentOf = (m: SessionMeta): string | undefined => {
  const p = m.metadata?.parent_session_id
  return typeof p === 'string' && p !== '' ? p : undefined
}
const counted = (n: number): string => `${n} ${n === 1 ? 'message' : 'messages'}`
const describeMeta = (m: SessionMeta): string => `${STATUS_LABEL[m.status]} · ${counted(m.message_count)}`
/** RFC 3339, UTC, milliseconds. */
const rfc3339 = (ms: number): string => new Date(ms).toISOString()
const byteLength = (s: string): number => new TextEncoder().encode(s).length

/**
 * Tier of a session for a (trimmed, lowercased) query; lower is better, undefined excludes it.
 * 0: id or title equals, or the title starts with the query (an empty query matches all);
 * 1: the id starts with a query of ≥ 4 bytes, or every query term prefixes some title word;
 * 2: the title contains it; 3: the description contains it.
 */
function tier(m: SessionMeta, q: string): number | undefined {
  if (q === '') return 0
  const id = m.session_id.toLowerCase()
  const title = m.title.trim().toLowerCase()
  if (id === q || title === q || title.startsWith(q)) return 0
  if (byteLength(q) >= 4 && id.startsWith(q)) return 1
  const words = title.split(/[^\p{L}\p{N}]+/u).filter(Boolean)
  const terms = q.split(/\s+/).filter(Boolean)
  if (terms.length && terms.every((t) => words.some((w) => w.startsWith(t)))) return 1
  if (title.includes(q)) return 2
  if (m.description.toLowerCase().includes(q)) return 3
  return undefined
}

function itemOf(m: SessionMeta): MentionItem {
  const child = parentOf(m) !== undefined
  return {
    id: m.session_id,
    label: label(m),
    ...(child && { hint: 'sub-agent' }),
    description: describeMeta(m),
    color: STATUS_COLOR[m.status],
  }
}

export function mentionSearch(d: Draft, req: MentionSearchRequest): MentionSearchResponse {
  return searchMentions(metas(d), req)
}

/** The search over any set of sessions (a server scopes it to the caller's own). */
export function searchMentions(metas: Iterable<SessionMeta>, req: MentionSearchRequest): MentionSearchResponse {
  const q = (req.query ?? '').trim().toLowerCase()
  const limit = Math.min(Math.max(req.limit ?? 8, 1), 50)
  const asking = req.context?.session_id ?? undefined
  const ranked: Array<{ m: SessionMeta; tier: number; child: number }> = []
  for (const m of metas) {
    // Machine test runs and the session doing the asking are never offered.
    if (m.kind === 'e2e' || m.session_id === asking) continue
    const t = tier(m, q)
    if (t !== undefined) ranked.push({ m, tier: t, child: parentOf(m) === undefined ? 0 : 1 })
  }
  ranked.sort(
    (a, b) =>
      a.tier - b.tier || a.child - b.child || b.m.updated_at - a.m.updated_at ||
      (a.m.session_id < b.m.session_id ? -1 : a.m.session_id > b.m.session_id ? 1 : 0),
  )
  return { items: ranked.slice(0, limit).map((r) => itemOf(r.m)) }
}

export function mentionGet(d: Draft, req: MentionGetRequest): MentionGetResponse {
  const m = d.meta(req.id)
  if (!m) return null
  const fields: MentionField[] = [
    { label: 'Status', value: STATUS_LABEL[m.status], tone: STATUS_TONE[m.status] },
    { label: 'Messages', value: String(m.message_count) },
    { label: 'Updated', value: rfc3339(m.updated_at) },
  ]
  if (m.status_reason?.trim()) fields.push({ label: 'Reason', value: m.status_reason })
  const agent = m.metadata?.agent_profile
  if (typeof agent === 'string' && agent !== '') fields.push({ label: 'Agent', value: agent })
  const parent = parentOf(m)
  if (parent !== undefined) fields.push({ label: 'Parent', value: parent })
  if (m.kind !== 'user') fields.push({ label: 'Kind', value: m.kind })
  // The draft is the owner's unsent input: never part of what a mention shows.
  const { draft: _d, draft_attachments: _a, ...data } = m
  const item = itemOf(m)
  return {
    ...item,
    icon: 'session',
    fields,
    open: { session: m.session_id },
    summary: `${item.label} — ${describeMeta(m)}${m.status_reason?.trim() ? ` (${m.status_reason.trim()})` : ''}`.replace(/\s+/g, ' '),
    data,
    updated_at: rfc3339(m.updated_at),
  }
}
