import { clampLimit, type OpContext } from '../model/context.js'
import type { Overlay } from '../engine/overlay.js'
import { SessionError } from '../model/errors.js'
import { itemOf } from '../model/items.js'
import { pathTo } from '../model/path.js'
import { notFound } from './lifecycle.js'
import { entryWithoutImageData } from '../model/image-data.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import { isUnopened } from '../model/sealed-entry.js'
import type {
  AgentMessage,
  ContentBlock,
  Json,
  MessagesRangeRequest,
  MessagesRangeResponse,
  MessagesTailRequest,
  MessagesTailResponse,
  SessionEntry,
  TailItem,
} from '../model/model.js'

const staleCursor = (id: string): SessionError =>
  new SessionError('session/invalid_cursor', `entry ${id} is not on the active path`)

/** Ids the contract's engine gives to wake-up entries (notifications, fired triggers, expiries). */
const WAKE_PREFIXES = [
  'e_fire_',
  'e_notify_',
  'e_expire_',
  'e_stalespawn_',
  'e_claimfail_',
  'e_condfail_',
  'e_trigfired_',
  'e_trigexpired_',
  'e_trigstale_',
]

/** An entry that wakes an agent mid-run: it belongs to the run and is always kept whole. */
function isWake(e: SessionEntry): boolean {
  const role = e.kind === 'message' ? e.message.role : undefined
  if (e.kind === 'message' && role !== 'user' && role !== 'custom') return false
  if (e.origin?.notification === true || e.origin?.trigger_fired === true) return true
  if (WAKE_PREFIXES.some((p) => e.id.startsWith(p))) return true
  const customType =
    e.kind === 'custom' ? e.custom_type : e.message.role === 'custom' ? e.message.custom_type : undefined
  return customType === 'trigger_fired'
}

const hasCalls = (m: AgentMessage): boolean =>
  m.role === 'assistant' && m.content.some((b) => b.type === 'function_call')

/** Whether an entry extends an activity run: a calling assistant turn, a result, or a wake entry. */
function inRun(e: SessionEntry): boolean {
  if (e.kind === 'message' && (hasCalls(e.message) || e.message.role === 'function_result')) return true
  return isWake(e)
}

/** The path cut into blocks: a single entry, or a maximal activity run. */
function blocksOf(path: readonly SessionEntry[]): SessionEntry[][] {
  const blocks: SessionEntry[][] = []
  let run: SessionEntry[] | undefined
  for (const e of path) {
    if (inRun(e)) {
      if (!run) blocks.push((run = []))
      run.push(e)
    } else {
      run = undefined
      blocks.push([e])
    }
  }
  return blocks
}

const chars = (s: string): string[] => Array.from(s)

/** What an elided call keeps of its arguments: nothing, except an agent trigger's short labels. */
function elidedArguments(function_id: string, args: Json): Json {
  if (function_id !== 'agent_trigger' || typeof args !== 'object' || args === null || Array.isArray(args))
    return {}
  const out: { [k: string]: Json } = {}
  if (typeof args.function === 'string' && chars(args.function).length <= 256) out.function = args.function
  if (typeof args.description === 'string') out.description = chars(args.description).slice(0, 120).join('')
  return out
}

function elideMessage(m: AgentMessage): AgentMessage {
  if (m.role === 'function_result') return { ...m, content: [], details: null }
  const content: ContentBlock[] = []
  for (const b of m.content) {
    if (b.type === 'thinking') continue
    content.push(
      b.type === 'function_call'
        ? {
            type: 'function_call',
            id: b.id,
            function_id: b.function_id,
            arguments: elidedArguments(b.function_id, b.arguments),
          }
        : b,
    )
  }
  return { ...m, content } as AgentMessage
}

function item(e: SessionEntry, withImages: boolean, elided: boolean): TailItem {
  const shown = withImages ? e : entryWithoutImageData(e)
  if (!elided || shown.kind !== 'message') return itemOf(shown)
  const message = elideMessage(shown.message)
  return shown.origin
    ? { entry_id: shown.id, message, origin: shown.origin, elided: true }
    : { entry_id: shown.id, message, elided: true }
}

/**
 * A block as items. Inside a run only the last calling assistant turn, the results answering its
 * calls, and wake/bookkeeping entries come back whole; everything else is a short placeholder.
 */
function blockItems(block: readonly SessionEntry[], withImages: boolean): TailItem[] {
  if (block.length === 1 && !inRun(block[0])) return [item(block[0], withImages, false)]
  let last: SessionEntry | undefined
  for (const e of block) if (e.kind === 'message' && hasCalls(e.message)) last = e
  const kept = new Set<string>()
  if (last?.kind === 'message')
    for (const b of last.message.content) if (b.type === 'function_call') kept.add(b.id)
  return block.map((e) => {
    const whole =
      e === last ||
      e.kind === 'custom' ||
      isWake(e) ||
      (e.message.role === 'function_result' && kept.has(e.message.function_call_id))
    return item(e, withImages, !whole)
  })
}

/** The active path of a session (root first); `[]` without a leaf. */
function activePath(d: Overlay, session_id: string): SessionEntry[] {
  const head = d.head(session_id)
  if (!head) throw notFound(session_id)
  return head.leaf === null ? [] : pathTo((id) => d.entry(session_id, id), head.leaf)
}

/** The path `messagesTail` cuts into blocks: the active path, custom entries kept unless asked not to. */
function tailPath(d: Overlay, req: MessagesTailRequest): SessionEntry[] {
  const path = activePath(d, req.session_id)
  return req.include_custom !== false ? path : path.filter((e) => e.kind === 'message')
}

/** How far `tailSpan`'s walk went: the blocks it still wants, and where the page starts so far. */
interface Walk {
  left: number
  start: number
  /** Walking back to `until_entry_id`'s block: everything from there to `start` is returned. */
  until: boolean
}

/**
 * The entries of `path` the tail returns, `path[start..end)`: whole blocks, found by walking back
 * from the end (or from `before_entry_id`'s block) so that only the blocks returned are looked
 * at, and the entry just before a tool run among them (to find where the run starts). `run(i)`:
 * whether `path[i]` extends an activity run (it reads the entry's content).
 */
function tailSpan(
  path: readonly SessionEntry[],
  req: MessagesTailRequest,
  ctx: OpContext,
  run: (i: number) => boolean,
  walk: Walk = { left: 0, start: path.length, until: false },
): { start: number; end: number } {
  const index = (id: string): number => {
    const i = path.findIndex((e) => e.id === id)
    if (i < 0) throw staleCursor(id)
    return i
  }
  /** Where the block holding `path[i]` starts: a lone entry, or the first of its run. */
  const blockStart = (i: number): number => {
    if (!run(i)) return i
    while (i > 0 && run(i - 1)) i--
    return i
  }
  const limit = clampLimit(ctx, req.limit)
  walk.left = limit
  const end = req.before_entry_id != null ? blockStart(index(req.before_entry_id)) : path.length
  let start = end
  for (let n = limit; n > 0 && start > 0; n--) {
    walk.left = n
    walk.start = start
    start = blockStart(start - 1)
  }
  // until_entry_id only ever widens the page back to the target's block.
  if (req.until_entry_id != null) {
    walk.start = start
    walk.until = true
    start = Math.min(start, blockStart(index(req.until_entry_id)))
  }
  return { start, end }
}

/**
 * The entries whose content `messagesTail` reads (see `OperationSpec.reads`): a block's bounds
 * depend on content (a calling assistant turn, a wake entry), so the walk stops at the first
 * entry held sealed and names it with the entries before it the walk is likely to need next
 * (one per block still wanted, more inside a tool run): asked again once they are opened.
 */
export function messagesTailReads(d: Overlay, req: MessagesTailRequest, ctx: OpContext): SessionEntry[] {
  const path = tailPath(d, req)
  const walk: Walk = { left: 0, start: path.length, until: false }
  // The entry looked at last, and how many entries of a run came just before it.
  let at = -1
  let streak = 0
  try {
    const { start, end } = tailSpan(
      path,
      req,
      ctx,
      (i) => {
        at = i
        const r = inRun(path[i])
        streak = r ? streak + 1 : 0
        return r
      },
      walk,
    )
    return path.slice(start, end)
  } catch (error) {
    if (!isUnopened(error) || at < 0) throw error
    // `at` itself is one of the blocks still wanted.
    const from = Math.max(0, at - (walk.left - 1) - streak)
    return path.slice(from, walk.until ? Math.max(walk.start, at + 1) : at + 1)
  }
}

export function messagesTail(d: Overlay, req: MessagesTailRequest, ctx: OpContext): MessagesTailResponse {
  const path = tailPath(d, req)
  if (path.length === 0) return { messages: [], has_more: false }
  const { start, end } = tailSpan(path, req, ctx, (i) => inRun(path[i]))
  const withImages = req.include_image_data !== false
  // The span starts and ends on block bounds: cut alone, it gives the same blocks.
  const messages = blocksOf(path.slice(start, end)).flatMap((b) => blockItems(b, withImages))
  return messages.length
    ? { messages, has_more: start > 0, oldest_entry_id: messages[0].entry_id }
    : { messages, has_more: start > 0 }
}

/** The page of `messagesRange`, from the clear fields alone (the path, ids, the cursor), and whether more follow. */
function rangePage(
  d: Overlay,
  req: MessagesRangeRequest,
  ctx: OpContext,
): { page: SessionEntry[]; more: boolean } {
  const path = activePath(d, req.session_id)
  const span = req.from_entry_id != null || req.to_entry_id != null
  if (req.entry_ids != null && span)
    throw new SessionError(
      'session/invalid_request',
      'give either from_entry_id/to_entry_id or entry_ids, not both',
    )
  if (req.entry_ids == null && (req.from_entry_id == null || req.to_entry_id == null)) {
    throw new SessionError(
      'session/invalid_request',
      'messages-range needs from_entry_id and to_entry_id, or entry_ids',
    )
  }
  const index = new Map(path.map((e, i) => [e.id, i]))
  const position = (id: string): number => {
    if (!d.entry(req.session_id, id))
      throw new SessionError('session/entry_not_found', `entry ${id} not found`)
    const i = index.get(id)
    if (i === undefined) throw staleCursor(id)
    return i
  }
  let selection: SessionEntry[]
  if (req.entry_ids != null) {
    const picked = new Set(req.entry_ids.map(position))
    selection = [...picked].sort((a, b) => a - b).map((i) => path[i])
  } else {
    const from = position(req.from_entry_id!)
    const to = position(req.to_entry_id!)
    if (from > to)
      throw new SessionError(
        'session/invalid_request',
        `from_entry_id ${req.from_entry_id} comes after to_entry_id ${req.to_entry_id}`,
      )
    selection = path.slice(from, to + 1)
  }
  let start = 0
  if (req.cursor != null) {
    const c = decodeCursor(req.cursor)
    if (!c || typeof c.id !== 'string') throw new SessionError('session/invalid_cursor', 'malformed cursor')
    const i = selection.findIndex((e) => e.id === c.id)
    if (i < 0)
      throw new SessionError('session/invalid_cursor', `entry ${String(c.id)} is not in the selection`)
    start = i + 1
  }
  const limit = clampLimit(ctx, req.limit)
  return { page: selection.slice(start, start + limit), more: start + limit < selection.length }
}

/** The entries of the page `messagesRange` returns (see `OperationSpec.reads`). */
export const messagesRangeReads = (d: Overlay, req: MessagesRangeRequest, ctx: OpContext): SessionEntry[] =>
  rangePage(d, req, ctx).page

export function messagesRange(d: Overlay, req: MessagesRangeRequest, ctx: OpContext): MessagesRangeResponse {
  const { page, more } = rangePage(d, req, ctx)
  const withImages = req.include_image_data !== false
  const messages = page.map((e) => item(e, withImages, false))
  const last = page[page.length - 1]
  return more && last ? { messages, next_cursor: encodeCursor({ id: last.id }) } : { messages }
}
