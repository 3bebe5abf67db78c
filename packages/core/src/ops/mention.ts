import type { Overlay } from '../engine/overlay.js'
import { WorkMeter } from './work.js'
import { metas } from '../engine/overlay-reads.js'
import type { PageQuery } from '../storage/seam.js'
import type {
  MentionField,
  MentionGetRequest,
  MentionGetResponse,
  MentionItem,
  MentionSearchRequest,
  MentionSearchResponse,
  SessionMeta,
  SessionStatus,
} from '../model/model.js'

// The `@session` mention provider (contract 7, item 14): a picker's search and a pill's view.

const STATUS_LABEL: Record<SessionStatus, string> = {
  idle: 'Idle',
  working: 'Working',
  done: 'Done',
  error: 'Error',
}
/** Colours and tones a chat UI maps to its palette: quiet when idle, busy, finished, failed. */
const STATUS_COLOR: Record<SessionStatus, string> = {
  idle: 'gray',
  working: 'blue',
  done: 'green',
  error: 'red',
}
const STATUS_TONE: Record<SessionStatus, string> = {
  idle: 'neutral',
  working: 'info',
  done: 'success',
  error: 'danger',
}

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
 * What one search may spend, in work units (about one character looked at; see `WorkMeter`).
 * Measured on a loaded 2-core machine, warm code runs 100 to 1,000 units per microsecond (the
 * many-term path, before the JIT has warmed it, about 35): a search holds the event loop for
 * 1–10 ms, 30 at worst. 1,000 sessions with 40-character titles cost about 400,000 units, so
 * searches over that many are whole; beyond about 2,500 such sessions they say `incomplete`.
 */
export const MENTION_WORK_BUDGET = 1_000_000

// A unit is about one character of a native pass (lowercasing, comparing, searching); splitting a
// title into words with a Unicode regular expression costs several.
const SPLIT = 4
/** Skipping or ranking a session (about 0.1 µs, as much as a few dozen characters). */
const PER_SESSION = 4
const log2 = (n: number): number => Math.ceil(Math.log2(n + 2))

interface Query {
  readonly q: string
  /** Its distinct whitespace-separated terms. */
  readonly terms: readonly string[]
  /** The query is at least 4 UTF-8 bytes (an id prefix needs that many). */
  readonly long: boolean
  /** Every term is letters and digits only (a term with anything else prefixes no word). */
  readonly wordy: boolean
}

/** What preparing a query costs: lowercasing it and splitting it into terms. */
const prepareCost = (query: string): number => query.trim().length * (2 + SPLIT)

/**
 * True when a whole budget cannot even prepare `query`: the answer is then known (no items,
 * `incomplete`) before any session is read, so a caller with paged reads skips reading the page.
 */
export const mentionQueryTooCostly = (query: string | null | undefined): boolean =>
  prepareCost(query ?? '') > MENTION_WORK_BUDGET

/** The query, trimmed and lowercased, or undefined when the budget cannot afford preparing it. */
function prepare(query: string, meter: WorkMeter): Query | undefined {
  const trimmed = query.trim()
  if (!meter.take(prepareCost(trimmed))) return undefined
  const q = trimmed.toLowerCase()
  const terms = [...new Set(q.split(/\s+/).filter(Boolean))]
  return { q, terms, long: q.length >= 4 || byteLength(q) >= 4, wordy: terms.every((t) => WORD.test(t)) }
}

const WORD_CHAR = /^[\p{L}\p{N}]$/u
const WORD = /^[\p{L}\p{N}]+$/u

/** True when the code point ending just before `i` is a letter or digit (a word goes on). */
function wordBefore(s: string, i: number): boolean {
  if (i === 0) return false
  const low = s.charCodeAt(i - 1)
  const pair = low >= 0xdc00 && low <= 0xdfff && i >= 2
  return WORD_CHAR.test(s.slice(pair ? i - 2 : i - 1, i))
}

/** True when `t` (letters and digits only) starts a word of `title`: found where no word goes on. */
function startsWord(title: string, t: string): boolean {
  for (let at = title.indexOf(t); at >= 0; at = title.indexOf(t, at + 1))
    if (!wordBefore(title, at)) return true
  return false
}

/**
 * True when every term is a prefix of some title word (words: the runs of letters and digits);
 * undefined when the budget cannot afford finding out.
 */
function everyTermPrefixes(title: string, Q: Query, meter: WorkMeter): boolean | undefined {
  const { terms } = Q
  // A term holding anything but letters and digits prefixes no word.
  if (!Q.wordy) return false
  // A few terms: each is looked for in the title (a native search, no words built). Many terms:
  // the title's words are sorted once and each term is a binary search.
  const direct = terms.length * (2 * title.length + 1) + Q.q.length
  const sorted =
    3 * ((SPLIT + log2(title.length)) * title.length + (Q.q.length + terms.length) * log2(title.length))
  if (!meter.take(Math.min(direct, sorted))) return undefined
  if (direct <= sorted) return terms.every((t) => startsWord(title, t))
  const order = [...new Set(title.split(/[^\p{L}\p{N}]+/u).filter(Boolean))].sort()
  return terms.every((t) => {
    // The first word not below `t`: if any word starts with `t`, this one does.
    let lo = 0
    let hi = order.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (order[mid]! < t) lo = mid + 1
      else hi = mid
    }
    return lo < order.length && order[lo]!.startsWith(t)
  })
}

/** Undecided: the budget ran out before the session's tier was known. */
const UNDECIDED = -1

/**
 * Tier of a session for a query; lower is better, undefined excludes it, UNDECIDED when the
 * budget could not afford deciding. Each step is paid for before it runs.
 * 0: id or title equals, or the title starts with the query (an empty query matches all);
 * 1: the id starts with a query of ≥ 4 bytes, or every query term prefixes some title word;
 * 2: the title contains it; 3: the description contains it.
 */
function tier(m: SessionMeta, Q: Query | undefined, meter: WorkMeter): number | undefined {
  if (Q === undefined) return 0
  const { q } = Q
  if (!meter.take(m.session_id.length + 2 * m.title.length)) return UNDECIDED
  const id = m.session_id.toLowerCase()
  const title = m.title.trim().toLowerCase()
  if (id === q || title === q || title.startsWith(q)) return 0
  if (Q.long && id.startsWith(q)) return 1
  if (Q.terms.length) {
    const all = everyTermPrefixes(title, Q, meter)
    if (all === undefined) return UNDECIDED
    if (all) return 1
  }
  if (!meter.take(title.length + q.length)) return UNDECIDED
  if (title.includes(q)) return 2
  if (!meter.take(2 * m.description.length + q.length)) return UNDECIDED
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

/**
 * Over a storage with paged reads, the sessions a search looks at: the most recently updated,
 * as many as the work budget can examine (see `MENTION_WORK_BUDGET`); with more on disk the
 * answer says `incomplete`, as it does when the budget runs out.
 */
export const MENTION_PAGE = 2500

export function mentionPage(): PageQuery {
  return { order: 'updated_desc', limit: MENTION_PAGE + 1 }
}

export function mentionSearch(d: Overlay, req: MentionSearchRequest): MentionSearchResponse {
  return d.listed ? searchMentionPage(metas(d), req) : searchMentions(metas(d), req)
}

/**
 * The search over a page read with `mentionPage()` (a server adds its tenancy filter to the
 * query): the first `MENTION_PAGE` are searched, and a page holding more says `incomplete`.
 */
export function searchMentionPage(
  listed: readonly SessionMeta[],
  req: MentionSearchRequest,
  meter?: WorkMeter,
): MentionSearchResponse {
  if (listed.length <= MENTION_PAGE) return searchMentions(listed, req, meter)
  return { ...searchMentions(listed.slice(0, MENTION_PAGE), req, meter), incomplete: true }
}

interface Ranked {
  m: SessionMeta
  tier: number
  child: number
}

const before = (a: Ranked, b: Ranked): boolean =>
  (a.tier - b.tier ||
    a.child - b.child ||
    b.m.updated_at - a.m.updated_at ||
    (a.m.session_id < b.m.session_id ? -1 : a.m.session_id > b.m.session_id ? 1 : 0)) < 0

/**
 * The search over any set of sessions (a server scopes it to the caller's own). Its work is
 * counted on `meter` (a fresh one of `MENTION_WORK_BUDGET` units by default): a session the
 * budget cannot afford to examine is left out and the answer says `incomplete`; the sessions
 * examined are ranked exactly as the contract says.
 */
export function searchMentions(
  metas: Iterable<SessionMeta>,
  req: MentionSearchRequest,
  meter: WorkMeter = new WorkMeter(MENTION_WORK_BUDGET),
): MentionSearchResponse {
  const limit = Math.min(Math.max(req.limit ?? 8, 1), 50)
  const asking = req.context?.session_id ?? undefined
  const query = req.query ?? ''
  const Q = query.trim() === '' ? undefined : prepare(query, meter)
  if (Q === undefined && query.trim() !== '') return { items: [], incomplete: true }
  let incomplete = false
  // The best `limit` so far, in order: a selection, not a sort of every match.
  const top: Ranked[] = []
  for (const m of metas) {
    // Looking at a session at all costs a few units: when they are gone, the rest are not looked at.
    if (!meter.take(PER_SESSION)) {
      incomplete = true
      break
    }
    // Machine test runs and the session doing the asking are never offered.
    if (m.kind === 'e2e' || m.session_id === asking) continue
    const t = tier(m, Q, meter)
    if (t === UNDECIDED) {
      incomplete = true
      continue
    }
    if (t === undefined) continue
    const r: Ranked = { m, tier: t, child: parentOf(m) === undefined ? 0 : 1 }
    if (top.length === limit && !before(r, top[limit - 1]!)) continue
    let i = top.length === limit ? limit - 1 : top.length
    while (i > 0 && before(r, top[i - 1]!)) {
      top[i] = top[i - 1]!
      i--
    }
    top[i] = r
  }
  const items = top.map((r) => itemOf(r.m))
  return incomplete ? { items, incomplete: true } : { items }
}

export function mentionGet(d: Overlay, req: MentionGetRequest): MentionGetResponse {
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
    summary:
      `${item.label} — ${describeMeta(m)}${m.status_reason?.trim() ? ` (${m.status_reason.trim()})` : ''}`.replace(
        /\s+/g,
        ' ',
      ),
    data,
    updated_at: rfc3339(m.updated_at),
  }
}
