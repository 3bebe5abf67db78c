import type { AssistantMessage, ContentBlock, Json, SessionEntry, StopReason, Usage } from '@colloquy/core'
import { customEntry, messageEntry } from '../session/entries.js'
import { TreeBuilder } from '../session/tree.js'
import type { ImportedAttachment } from '../types.js'
import { compact, count, isObj, num, str, toJson, type Obj } from '../values.js'
import type { Skipped, Warnings } from '../import/warnings.js'

// One Claude Code session's tree from its records. Assistant lines are merged by
// `message.id` into one message; each tool result is attached after the call it answers
// (by tool_use_id, not by tree position, so parallel calls leave no dead branches); progress
// and telemetry lines are transparent; a compact boundary joins its logical parent.

/** `system` subtypes that are timing/hook telemetry: transparent in the tree, like progress. */
const TELEMETRY = new Set(['stop_hook_summary', 'turn_duration', 'bridge_status'])
/** Envelope fields repeated on every line; left out of custom entries' data. */
const ENVELOPE = new Set([
  'parentUuid',
  'logicalParentUuid',
  'isSidechain',
  'userType',
  'cwd',
  'sessionId',
  'version',
  'gitBranch',
  'slug',
  'type',
  'uuid',
  'timestamp',
  'entrypoint',
  'agentId',
])

export interface Result {
  call: string
  content: ContentBlock[]
  is_error: boolean
}

export interface Rec {
  n: number
  uuid: string
  parent: string | null
  time: number
  /** Sidechain bucket: agent id, `''` for an inline (1.0.x) sidechain, null for the main chain. */
  side: string | null
  kind: 'user' | 'assistant' | 'system' | 'progress' | 'other'
  blocks: ContentBlock[]
  results: Result[]
  meta?: boolean
  compactSummary?: boolean
  details?: Json
  sourceTool?: string
  msgId?: string
  model?: string
  stop?: string
  usage?: Obj
  apiError?: boolean
  /** system subtype, or the line type for `other`. */
  subtype?: string
  logicalParent?: string
  data?: Obj
  attachments?: Omit<ImportedAttachment, 'session_id'>[]
}

interface Group {
  key: string
  parent: string | null
  lines: Rec[]
  calls: string[]
  results: { rec: Rec; result: Result }[]
  /** Entries of records spliced into this group's chain, by the member they follow. */
  inserts: Map<string, SessionEntry[]>
}

/** Where a record that sits inside a merged group goes: after `anchor`, a member of `group`. */
interface Splice {
  group: Group
  anchor: string
}

const usageOf = (u: Obj | undefined, output: number | undefined): Usage | undefined => {
  if (!u) return undefined
  return compact({
    input: count(u.input_tokens),
    output: output ?? count(u.output_tokens),
    cache_read: count(u.cache_read_input_tokens),
    cache_write: count(u.cache_creation_input_tokens),
  })
}

const STOP: Record<string, StopReason> = {
  end_turn: 'end',
  stop_sequence: 'end',
  pause_turn: 'end',
  refusal: 'end',
  tool_use: 'function_call',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
}

export interface BuiltTree {
  entries: SessionEntry[]
  attachments: Omit<ImportedAttachment, 'session_id'>[]
  /** Sub-agent id → the Task call whose result names it. */
  agentResults: Map<string, string>
  prompt: string | undefined
  /** Parents outside this tree that `elsewhere` knew (a sidechain file starting in the main one). */
  outside: string[]
  tailOf(uuid: string): string | undefined
  taskFor(
    agentId: string | undefined,
    prompt: string | undefined,
  ): { id: string; description: string | undefined } | undefined
}

function payload(o: Obj): Json {
  const out: Obj = {}
  for (const k of Object.keys(o)) if (!ENVELOPE.has(k)) out[k] = o[k]
  return toJson(out)
}

/** The lines of one API response (same `message.id`) as one assistant message. */
function assistantEntry(g: Group): SessionEntry {
  const first = g.lines[0]
  const content: ContentBlock[] = []
  let model: string | undefined
  let stop: string | undefined
  let usage: Obj | undefined
  let output: number | undefined
  let apiError = false
  for (const l of g.lines) {
    for (const b of l.blocks) content.push(b)
    model ??= l.model
    stop = l.stop ?? stop
    usage = l.usage ?? usage
    // `usage` is repeated on every line; early partial lines show a smaller output count.
    const out = count(l.usage?.output_tokens)
    if (out !== undefined) output = Math.max(output ?? 0, out)
    apiError ||= l.apiError === true
  }
  const message: AssistantMessage = {
    role: 'assistant',
    content,
    stop_reason: apiError
      ? 'error'
      : stop
        ? (STOP[stop] ?? 'end')
        : content.some((b) => b.type === 'function_call')
          ? 'function_call'
          : 'end',
    model: model ?? 'unknown',
    provider: 'anthropic',
    timestamp: first.time,
  }
  if (stop) message.native_stop_reason = stop
  const u = usageOf(usage, output)
  if (u && Object.keys(u).length) message.usage = u
  if (apiError) {
    const t = content.find((b) => b.type === 'text')
    message.error_message = t?.type === 'text' ? t.text : 'API error'
  }
  return messageEntry(g.key, message)
}

function resultEntry(r: Rec, result: Result, calls: Map<string, { name: string }>): SessionEntry {
  return messageEntry(r.results.length > 1 ? `${r.uuid}:${result.call}` : r.uuid, {
    role: 'function_result',
    function_call_id: result.call,
    function_id: calls.get(result.call)?.name ?? 'unknown',
    content: result.content,
    timestamp: r.time,
    // `toolUseResult` is per line; with several results on one line it describes all of them.
    details: r.details ?? null,
    is_error: result.is_error,
  })
}

/** One session's tree from its records (file order). */
export function buildTree(
  recs: Rec[],
  sessionId: string,
  warnings: Warnings,
  skipped: Skipped,
  elsewhere?: (uuid: string) => boolean,
): BuiltTree {
  const tb = new TreeBuilder()
  const groups = new Map<string, Group>()
  const groupOfLine = new Map<string, Group>()
  const owner = new Map<string, Group>()
  const callInfo = new Map<string, { name: string; input: Json }>()
  for (const r of recs) {
    if (r.kind !== 'assistant') continue
    let g = groups.get(r.msgId!)
    if (!g)
      groups.set(
        r.msgId!,
        (g = { key: r.uuid, parent: r.parent, lines: [], calls: [], results: [], inserts: new Map() }),
      )
    g.lines.push(r)
    groupOfLine.set(r.uuid, g)
    for (const b of r.blocks) {
      if (b.type !== 'function_call') continue
      g.calls.push(b.id)
      owner.set(b.id, g)
      callInfo.set(b.id, { name: b.function_id, input: b.arguments })
    }
  }
  const warn = (code: string, message: string, r: Rec): void =>
    warnings.add(code, message, { session_id: sessionId, line: r.n })
  const byUuid = new Map<string, Rec>()
  for (const r of recs) if (!byUuid.has(r.uuid)) byUuid.set(r.uuid, r)
  for (const g of groups.values()) orderLines(g, byUuid, groupOfLine)
  const splices = findSplices(recs, byUuid, groupOfLine, owner)
  /** A record's entries: a node of the tree, or spliced into the group it sits inside. */
  const place = (key: string, parent: string | null, entries: SessionEntry[]): void => {
    const at = splices.get(key)
    if (!at) return tb.node(key, parent, entries)
    const list = at.group.inserts.get(at.anchor)
    if (list) list.push(...entries)
    else at.group.inserts.set(at.anchor, [...entries])
    tb.alias(key, at.group.key)
  }
  const attachments = recs.flatMap((r) => r.attachments ?? [])
  const agentResults = new Map<string, string>()

  for (const r of recs) {
    switch (r.kind) {
      case 'assistant': {
        const g = groupOfLine.get(r.uuid)!
        if (g.key !== r.uuid) tb.alias(r.uuid, g.key)
        break
      }
      case 'user':
        placeUser(r, tb, place, owner, groupOfLine, callInfo, agentResults, warn)
        break
      case 'progress':
        skipped.add(`progress${r.subtype ? `/${r.subtype}` : ''}`)
        tb.alias(r.uuid, r.parent)
        break
      case 'system':
        placeSystem(r, tb, place, skipped)
        break
      default:
        // Newer record types in the tree (`attachment`, …): kept whole, out of the transcript.
        place(r.uuid, r.parent, [
          customEntry(r.uuid, r.time, `claude-code/${r.subtype ?? 'other'}`, payload(r.data!)),
        ])
    }
  }
  for (const g of groups.values()) {
    const order = (id: string): number => {
      const i = g.calls.indexOf(id)
      return i === -1 ? Infinity : i
    }
    g.results.sort((a, b) => order(a.result.call) - order(b.result.call))
    const entries: SessionEntry[] = [assistantEntry(g)]
    for (const l of g.lines) entries.push(...(g.inserts.get(l.uuid) ?? []))
    const seen = new Set<string>()
    const left = new Map<Rec, number>()
    for (const { rec } of g.results) left.set(rec, (left.get(rec) ?? 0) + 1)
    for (const { rec, result } of g.results) {
      if (seen.has(result.call))
        warn('duplicate-result', `tool call ${result.call} has more than one result; both kept in order`, rec)
      seen.add(result.call)
      entries.push(resultEntry(rec, result, callInfo))
      // What the file put after a result line (a hook's output) follows its last result.
      left.set(rec, left.get(rec)! - 1)
      if (left.get(rec) === 0) entries.push(...(g.inserts.get(rec.uuid) ?? []))
    }
    for (const call of g.calls) {
      if (!seen.has(call))
        warn(
          'unpaired-call',
          `tool call ${call} (${callInfo.get(call)?.name}) has no result in the file (the file ends mid-turn or the run was cut off)`,
          g.lines[0],
        )
    }
    tb.node(g.key, g.parent, entries)
  }
  const missing = new Set<string>()
  const outside: string[] = []
  const entries = tb.build((m) => {
    if (missing.has(m.missing)) return
    if (elsewhere?.(m.missing)) {
      missing.add(m.missing)
      outside.push(m.missing)
      return
    }
    missing.add(m.missing)
    const r = recs.find((x) => x.uuid === m.key.split('#')[0])
    const via = m.parent === m.missing ? '' : ` (through ${m.parent})`
    warnings.add(
      'missing-parent',
      `record ${m.key.split('#')[0]} descends from ${m.missing}${via}, which is not in the file (it starts mid-session); it becomes a root`,
      { session_id: sessionId, ...(r && { line: r.n }) },
    )
  })
  const first = recs.find((r) => r.kind === 'user' && r.results.length === 0)
  const prompt = first?.blocks.find((b) => b.type === 'text')
  return {
    entries,
    attachments,
    agentResults,
    outside,
    prompt: prompt?.type === 'text' ? prompt.text : undefined,
    tailOf: (uuid: string) => tb.tailOf(uuid) ?? undefined,
    taskFor: (agentId: string | undefined, prompt: string | undefined) => {
      // 2.x results name the agent; 1.0.x inline runs only match by the prompt they were given.
      const byAgent = agentId === undefined ? undefined : agentResults.get(agentId)
      for (const [id, info] of callInfo) {
        const input = isObj(info.input) ? info.input : {}
        if (id === byAgent || (byAgent === undefined && prompt !== undefined && input.prompt === prompt))
          return { id, description: str(input.description) }
      }
      return undefined
    },
  }
}

type Place = (key: string, parent: string | null, entries: SessionEntry[]) => void

function placeUser(
  r: Rec,
  tb: TreeBuilder,
  place: Place,
  owner: Map<string, Group>,
  groupOfLine: Map<string, Group>,
  callInfo: Map<string, { name: string; input: Json }>,
  agentResults: Map<string, string>,
  warn: (code: string, message: string, r: Rec) => void,
): void {
  if (r.compactSummary) {
    // The summary Claude Code injects after a compact boundary belongs to that boundary.
    const boundary = tb.entries(r.parent ?? '')?.[0]
    if (boundary?.kind === 'custom' && boundary.custom_type === 'compaction' && isObj(boundary.data)) {
      const t = r.blocks.find((b) => b.type === 'text')
      boundary.data = { ...boundary.data, summary: t?.type === 'text' ? t.text : null, summary_uuid: r.uuid }
      tb.alias(r.uuid, r.parent)
      return
    }
  }
  // Where what follows on this line attaches: after the call's results, or in place.
  let at = r.parent
  r.results.forEach((result, i) => {
    const g = owner.get(result.call) ?? (r.sourceTool ? groupOfLine.get(r.sourceTool) : undefined)
    const agentId = isObj(r.details) ? str(r.details.agentId) : undefined
    if (agentId && callInfo.has(result.call)) agentResults.set(agentId, result.call)
    if (g) {
      g.results.push({ rec: r, result })
      at = g.key
      return
    }
    // The call is not in the file (it starts mid-turn): keep the result where the tree puts it.
    warn(
      'orphan-result',
      `tool result for ${result.call} has no matching tool call in the file (it starts mid-turn); kept in place`,
      r,
    )
    const key = `${r.uuid}#${i}`
    tb.node(key, at, [resultEntry(r, result, callInfo)])
    at = key
  })
  if (!r.blocks.length) return tb.alias(r.uuid, at)
  const entry = messageEntry(
    r.uuid,
    { role: 'user', content: r.blocks, timestamp: r.time },
    r.meta ? { is_meta: true } : undefined,
  )
  // Text beside results stays after them; a record of its own may sit inside a merged group.
  if (r.results.length) tb.node(r.uuid, at, [entry])
  else place(r.uuid, at, [entry])
}

function placeSystem(r: Rec, tb: TreeBuilder, place: Place, skipped: Skipped): void {
  const o = r.data!
  if (r.subtype === 'compact_boundary') {
    // The boundary cuts the chain (parentUuid null); joining it to the pre-compaction leaf
    // keeps one tree, with the summary (filled in by the next line) on a custom entry.
    const m = isObj(o.compactMetadata) ? o.compactMetadata : {}
    const data = compact({
      source: 'claude-code',
      trigger: str(m.trigger),
      pre_tokens: num(m.preTokens),
      post_tokens: num(m.postTokens),
      logical_parent_uuid: r.logicalParent,
      summary: null,
    })
    tb.node(r.uuid, r.logicalParent ?? r.parent, [customEntry(r.uuid, r.time, 'compaction', toJson(data))])
  } else if (r.subtype === 'microcompact_boundary') {
    const m = isObj(o.microcompactMetadata) ? o.microcompactMetadata : {}
    place(r.uuid, r.parent, [
      customEntry(r.uuid, r.time, 'microcompaction', toJson({ source: 'claude-code', ...m })),
    ])
  } else if (TELEMETRY.has(r.subtype ?? '')) {
    skipped.add(`system/${r.subtype}`)
    tb.alias(r.uuid, r.parent)
  } else {
    place(r.uuid, r.parent, [customEntry(r.uuid, r.time, 'claude-code/system', payload(o))])
  }
}

/** The group a record is merged into: an assistant line's message, or the call a result answers. */
function memberOf(r: Rec, groupOfLine: Map<string, Group>, owner: Map<string, Group>): Group | undefined {
  if (r.kind === 'assistant') return groupOfLine.get(r.uuid)
  for (const res of r.results) {
    const g = owner.get(res.call) ?? (r.sourceTool ? groupOfLine.get(r.sourceTool) : undefined)
    if (g) return g
  }
  return undefined
}

/** Records that become entries of their own (not aliases) and so could hang off a group. */
const spliceable = (r: Rec): boolean =>
  r.kind === 'other' ||
  (r.kind === 'user' && r.results.length === 0 && !r.compactSummary) ||
  (r.kind === 'system' && r.subtype !== 'compact_boundary' && !TELEMETRY.has(r.subtype ?? ''))

/**
 * Records that sit inside a merged group in the source: between two lines of one API response,
 * between a call and its result, between a result and the next line of the same response (a
 * 1.0.x hook `system` line, a 2.x `hook_success` attachment), or as a dead-end side leaf of a
 * result on a parallel call's pseudo-branch. Hung off the group's last entry they would be
 * dead-end siblings of the conversation (a fork the source never had); each is spliced into
 * the group's chain right after the member it follows instead.
 */
function findSplices(
  recs: Rec[],
  byUuid: Map<string, Rec>,
  groupOfLine: Map<string, Group>,
  owner: Map<string, Group>,
): Map<string, Splice> {
  const member = new Map<string, Group>()
  // Records with a conversation turn (a message, a result) at or below them.
  const live = new Set<string>()
  for (const r of recs) {
    const g = memberOf(r, groupOfLine, owner)
    if (g) member.set(r.uuid, g)
    if (g || r.kind === 'user' || r.kind === 'assistant') {
      for (let k: string | null = r.uuid, steps = 0; k !== null && !live.has(k) && steps < 10_000; steps++) {
        live.add(k)
        k = byUuid.get(k)?.parent ?? null
      }
    }
  }
  const out = new Map<string, Splice>()
  const add = (r: Rec, group: Group, anchor: string): void => {
    if (spliceable(r) && !out.has(r.uuid)) out.set(r.uuid, { group, anchor })
  }
  for (const r of recs) {
    const g = member.get(r.uuid)
    if (g) {
      // Walk up to the nearest member; if it is of the same group, the records between are inside.
      const between: Rec[] = []
      for (let k = r.parent, steps = 0; k !== null && steps < 10_000; steps++) {
        const above = byUuid.get(k)
        if (!above) break
        const mg = member.get(k)
        if (mg) {
          if (mg === g) for (let i = between.length - 1; i >= 0; i--) add(between[i], g, k)
          break
        }
        between.push(above)
        k = above.parent
      }
    } else if (!live.has(r.uuid) && spliceable(r)) {
      // A dead-end side branch of bookkeeping (a hook attachment under a parallel call's result):
      // it follows the member it hangs under, through progress and other dead-end records.
      for (let k = r.parent, steps = 0; k !== null && steps < 10_000; steps++) {
        const above = byUuid.get(k)
        if (!above) break
        const mg = member.get(k)
        if (mg) {
          add(r, mg, k)
          break
        }
        if (live.has(k)) break
        k = above.parent
      }
    }
  }
  return out
}

/**
 * A group's lines in chain order, its key and parent from the topmost one: files may write a
 * child before its parent, and the first line in file order is then not the first of the chain.
 */
function orderLines(g: Group, byUuid: Map<string, Rec>, groupOfLine: Map<string, Group>): void {
  // The usual case, each line the child of the one before: nothing to reorder.
  if (g.lines.every((l, i) => i === 0 || l.parent === g.lines[i - 1].uuid)) return
  const depth = new Map<Rec, number>()
  for (const l of g.lines) {
    let d = 0
    const seen = new Set<string>()
    for (let k = l.parent; k !== null && !seen.has(k) && seen.size < 10_000;) {
      seen.add(k)
      const above = byUuid.get(k)
      if (!above) break
      const ag = groupOfLine.get(k)
      if (ag === g) d++
      else if (ag) break
      k = above.parent
    }
    depth.set(l, d)
  }
  g.lines.sort((a, b) => depth.get(a)! - depth.get(b)! || a.n - b.n)
  g.key = g.lines[0].uuid
  g.parent = g.lines[0].parent
  g.calls = g.lines.flatMap((l) => l.blocks.flatMap((b) => (b.type === 'function_call' ? [b.id] : [])))
}
