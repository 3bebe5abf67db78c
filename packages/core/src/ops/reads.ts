import { clampLimit, type OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import { metas } from '../engine/overlay-reads.js'
import { SessionError } from '../model/errors.js'
import { compareFor, sortKey } from './select.js'
import { itemOf, passes } from '../model/items.js'
import { jsonEqual, metadataMatches } from '../model/json.js'
import { pathTo } from '../model/path.js'
import { Heap } from '../util/heap.js'
import { LIST_WORK_BUDGET, WorkMeter } from './work.js'
import { notFound } from './lifecycle.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import type { PageQuery } from '../storage/seam.js'
import { entryWithoutImageData, withoutImageData } from '../model/image-data.js'
import type {
  GetMessageRequest,
  GetMessageResponse,
  GetRequest,
  GetResponse,
  ListOrder,
  ListRequest,
  ListResponse,
  MessageItem,
  MessagesRequest,
  MessagesResponse,
  SessionEntry,
  SessionMeta,
} from '../model/model.js'

const badCursor = (why: string): SessionError => new SessionError('session/invalid_cursor', why)

export function get(d: Overlay, req: GetRequest): GetResponse {
  const meta = d.meta(req.session_id)
  return meta ? { meta } : null
}

/** Values a filter value holds at any depth, each a unit to compare (a scalar costs none). */
function cost(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0
  let n = 0
  for (const x of Array.isArray(v) ? v : Object.values(v as object)) n += 1 + cost(x)
  return n
}

/**
 * The list's metadata test (the core's `metadataMatches`) on `meter`: a session pays for the
 * filter's first key, and for the rest (a unit per further key and per value they hold) only
 * once the first matched, so another owner's session costs one comparison whatever the filter
 * holds. Throws `session/invalid_request` when the budget cannot pay.
 */
function metadataFilter(
  filter: ListRequest['metadata'],
  meter: WorkMeter,
): (metadata: SessionMeta['metadata']) => boolean {
  const keys = filter ? Object.keys(filter) : []
  if (!filter || keys.length === 0) return () => true
  const first = keys[0]!
  const firstCost = cost(filter[first])
  const restCost = keys.slice(1).reduce((n, k) => n + 1 + cost(filter[k]), 0)
  const pay = (units: number): void => {
    if (!meter.take(units)) {
      throw new SessionError(
        'session/invalid_request',
        `the metadata filter compares more than ${meter.budget} values over these sessions (past the first of each): narrow it`,
      )
    }
  }
  return (metadata) => {
    if (!metadata) return false
    pay(firstCost)
    if (!Object.prototype.hasOwnProperty.call(metadata, first) || !jsonEqual(filter[first], metadata[first]))
      return false
    pay(restCost)
    return metadataMatches(filter, metadata)
  }
}

/** The order of a list request and the keyset position its cursor names (checked). */
function positionOfRequest(req: ListRequest): { order: ListOrder; after?: { k: number; id: string } } {
  const order = req.order ?? 'updated_desc'
  if (req.cursor == null) return { order }
  const c = decodeCursor(req.cursor)
  if (!c || typeof c.k !== 'number' || typeof c.id !== 'string' || typeof c.o !== 'string')
    throw badCursor('malformed cursor')
  if (c.o !== order) throw badCursor(`cursor was issued for order ${c.o}, not ${order}`)
  return { order, after: { k: c.k, id: c.id } }
}

/**
 * The sessions `list` needs from a storage with paged reads: the first `limit + 1` after the
 * cursor that pass the filters (the metadata filter on its work budget, as `list` pays it), and
 * `spare` more for the sessions the batch's own writes may push out.
 */
export function listPage(req: ListRequest, ctx: OpContext, spare: number): PageQuery {
  const { order, after } = positionOfRequest(req)
  const matches = metadataFilter(req.metadata, new WorkMeter(LIST_WORK_BUDGET))
  return {
    order,
    ...(after && { after }),
    status: req.status,
    kinds: req.kinds,
    ...(req.metadata && { accept: (m: SessionMeta) => matches(m.metadata), metadata: req.metadata }),
    limit: clampLimit(ctx, req.limit) + 1 + spare,
  }
}

export function list(
  d: Overlay,
  req: ListRequest,
  ctx: OpContext,
  meter = new WorkMeter(LIST_WORK_BUDGET),
): ListResponse {
  const { order, after } = positionOfRequest(req)
  const cmp = compareFor(order)
  const key = (m: SessionMeta) => ({ k: sortKey(m, order), id: m.session_id })
  const limit = clampLimit(ctx, req.limit)
  // The first `limit + 1` after the cursor, kept in a heap (the last of them on top): a page
  // costs one pass over the sessions, not a sort of all of them.
  const top = new Heap<SessionMeta>((a, b) => cmp(key(b), key(a)))
  const matches = metadataFilter(req.metadata, meter)
  for (const m of metas(d)) {
    if (after && cmp(key(m), after) <= 0) continue
    if (req.status != null && m.status !== req.status) continue
    if (req.kinds != null && !req.kinds.includes(m.kind)) continue
    if (!matches(m.metadata)) continue
    if (top.size <= limit) top.push(m)
    else if (cmp(key(m), key(top.peek()!)) < 0) top.replaceTop(m)
  }
  const all = top.drain().sort((a, b) => cmp(key(a), key(b)))
  const sessions = all.slice(0, limit)
  const last = sessions[sessions.length - 1]
  return all.length > limit && last
    ? { sessions, next_cursor: encodeCursor({ o: order, k: sortKey(last, order), id: last.session_id }) }
    : { sessions }
}

export function getMessage(d: Overlay, req: GetMessageRequest): GetMessageResponse {
  const entry = d.meta(req.session_id) && d.entry(req.session_id, req.entry_id)
  if (!entry) return null
  return { entry: req.include_image_data === false ? entryWithoutImageData(entry) : entry }
}

/** The entry `getMessage` returns (see `OperationSpec.reads`). */
export function getMessageReads(d: Overlay, req: GetMessageRequest): SessionEntry[] {
  const entry = d.meta(req.session_id) && d.entry(req.session_id, req.entry_id)
  return entry ? [entry] : []
}

/** Steps 2–3 of `session::messages`: the chain ending at `from_entry_id` or the active leaf. */
export function chainFor(
  d: Overlay,
  session_id: string,
  from_entry_id: string | null | undefined,
): SessionEntry[] {
  const head = d.head(session_id)
  if (!head) throw notFound(session_id)
  if (from_entry_id != null && !d.entry(session_id, from_entry_id)) {
    throw new SessionError('session/entry_not_found', `entry ${from_entry_id} not found`)
  }
  const leaf = from_entry_id ?? head.leaf
  return leaf === null ? [] : pathTo((id) => d.entry(session_id, id), leaf)
}

/** Steps 2–6 of `session::messages` on the clear fields alone: the page and whether more follow. */
function messagesPage(
  d: Overlay,
  req: MessagesRequest,
  ctx: OpContext,
): { page: SessionEntry[]; more: boolean } {
  const path = chainFor(d, req.session_id, req.from_entry_id)
  if (path.length === 0) return { page: [], more: false }
  const includeCustom = req.include_custom === true
  const filtered = path.filter((e) => passes(e, req.roles, includeCustom))
  let start = 0
  // A cursor takes precedence over after_entry_id; both resume strictly after an entry that must
  // be in the filtered list, so a stale watermark fails loudly instead of skipping messages.
  let anchor: string | undefined
  if (req.cursor != null) {
    const c = decodeCursor(req.cursor)
    if (!c || typeof c.id !== 'string') throw badCursor('malformed cursor')
    anchor = c.id
  } else if (req.after_entry_id != null) anchor = req.after_entry_id
  if (anchor !== undefined) {
    const i = filtered.findIndex((e) => e.id === anchor)
    if (i < 0) throw badCursor(`entry ${anchor} is not on the requested path`)
    start = i + 1
  }
  const limit = clampLimit(ctx, req.limit)
  return { page: filtered.slice(start, start + limit), more: start + limit < filtered.length }
}

/** The entries of the page `messages` returns (see `OperationSpec.reads`). */
export const messagesReads = (d: Overlay, req: MessagesRequest, ctx: OpContext): SessionEntry[] =>
  messagesPage(d, req, ctx).page

export function messages(d: Overlay, req: MessagesRequest, ctx: OpContext): MessagesResponse {
  const { page, more } = messagesPage(d, req, ctx)
  const items: MessageItem[] = page.map((e) =>
    req.include_image_data === false && e.kind === 'message' ? imageless(e) : itemOf(e),
  )
  const last = page[page.length - 1]
  return more && last ? { messages: items, next_cursor: encodeCursor({ id: last.id }) } : { messages: items }
}

function imageless(e: SessionEntry & { kind: 'message' }): MessageItem {
  const message = withoutImageData(e.message)
  if (message === e.message) return itemOf(e)
  return e.origin ? { entry_id: e.id, message, origin: e.origin } : { entry_id: e.id, message }
}
