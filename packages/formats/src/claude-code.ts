import type { AssistantMessage, ContentBlock, Json, JsonObject, SessionEntry, SessionImport, StopReason, Usage } from '@colloquy/core'
import { block, resultContent, type BlockContext } from './claude-code-blocks.js'
import type { ImportContext } from './context.js'
import { customEntry, messageEntry, text } from './entries.js'
import { lineBatches, type Source } from './input.js'
import { sessionOf } from './session.js'
import { latestLeaf, pathTo, TreeBuilder } from './tree.js'
import type { ImportedAttachment } from './types.js'
import { arr, compact, count, defined, isObj, num, parsed, str, titleFrom, toJson, toMs, type Obj } from './values.js'
import { Skipped, Warnings } from './warnings.js'

// Claude Code session JSONL (spec §1). One line per record; records with a `uuid` form a
// parent tree, the others are bookkeeping. See `ClaudeCodeReader.finish` for how the tree is
// rebuilt: assistant lines merged by `message.id`, tool results attached to their call.

/** Line types without uuid that carry nothing for the transcript; counted, never silent. */
const BOOKKEEPING = new Set(['file-history-snapshot', 'queue-operation'])
/** Line types without uuid whose content is session metadata. */
const META_LINES: Record<string, string> = {
  'agent-name': 'agentName', 'agent-setting': 'agentSetting', 'permission-mode': 'permissionMode', mode: 'mode',
  'pr-link': 'prUrl', 'bridge-session': 'bridgeSessionId',
}
/** `system` subtypes that are timing/hook telemetry: transparent in the tree, like progress. */
const TELEMETRY = new Set(['stop_hook_summary', 'turn_duration', 'bridge_status'])
/** Envelope fields repeated on every line; left out of custom entries' data. */
const ENVELOPE = new Set(['parentUuid', 'logicalParentUuid', 'isSidechain', 'userType', 'cwd', 'sessionId', 'version', 'gitBranch', 'slug', 'type', 'uuid', 'timestamp', 'entrypoint', 'agentId'])

interface Result {
  call: string
  content: ContentBlock[]
  is_error: boolean
}

interface Rec {
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
}

const usageOf = (u: Obj | undefined, output: number | undefined): Usage | undefined => {
  if (!u) return undefined
  return compact({ input: count(u.input_tokens), output: output ?? count(u.output_tokens), cache_read: count(u.cache_read_input_tokens), cache_write: count(u.cache_creation_input_tokens) })
}

const STOP: Record<string, StopReason> = {
  end_turn: 'end', stop_sequence: 'end', pause_turn: 'end', refusal: 'end', tool_use: 'function_call', max_tokens: 'length', model_context_window_exceeded: 'length',
}

/** `/name args` for a slash-command prompt, else the text: what a title should show. */
function promptTitle(t: string): string | undefined {
  const name = /<command-name>([^<]*)<\/command-name>/.exec(t)?.[1]
  if (name) return `${name.trim()} ${/<command-args>([^<]*)<\/command-args>/.exec(t)?.[1]?.trim() ?? ''}`.trim()
  return t.trimStart().startsWith('<') ? undefined : t
}

export class ClaudeCodeReader {
  private readonly recs: Rec[] = []
  private readonly summaries: { summary: string; leaf: string }[] = []
  private readonly info: Obj = {}
  private customTitle: string | undefined
  private aiTitle: string | undefined
  private lastPromptLeaf: string | undefined
  private sessionId: string | undefined
  private firstTime: number | undefined
  private lastTime: number | undefined
  readonly attachments: ImportedAttachment[] = []
  /** The record being read; block mapping reports against it (one context, not one per line). */
  private current: Rec | undefined
  private readonly blockContext: BlockContext = {
    warn: (code, message) => this.warnings.add(code, `line ${this.current!.n}: ${message}`, { line: this.current!.n }),
    attach: (a) => {
      const rec = this.current!
      const id = `att-${rec.uuid}-${(rec.attachments ??= []).length}`
      rec.attachments.push({ ...a, attachment_id: id })
      return id
    },
  }

  constructor(
    private readonly warnings: Warnings,
    private readonly skipped: Skipped,
    private readonly now: () => number = Date.now,
  ) {}

  push(line: string, n: number, file?: string): void {
    if (!line.trim()) return
    let o: unknown
    try {
      o = JSON.parse(line)
    } catch {
      this.warnings.add('bad-line', `line ${n} is not valid JSON (truncated or corrupted); skipped`, { line: n, ...(file && { file }) })
      return
    }
    if (!isObj(o)) return this.warnings.add('bad-line', `line ${n} is not a JSON object; skipped`, { line: n })
    const type = str(o.type) ?? ''
    const uuid = str(o.uuid)
    const time = toMs(o.timestamp)
    if (time !== undefined) {
      this.firstTime = Math.min(this.firstTime ?? time, time)
      this.lastTime = Math.max(this.lastTime ?? time, time)
    }
    if (!uuid) return this.bookkeeping(type, o, n)
    const side = o.isSidechain === true ? (str(o.agentId) ?? '') : null
    if (side === null) this.sessionId ??= str(o.sessionId)
    if (side !== null) this.info.parentSessionId ??= str(o.sessionId)
    if (side === null) {
      for (const [k, f] of [['cwd', 'cwd'], ['gitBranch', 'git_branch'], ['version', 'version'], ['slug', 'slug']] as const) {
        if (typeof o[k] === 'string') this.info[f] = o[k]
      }
    }
    // Every field set up front: one object shape for all records keeps the later passes fast.
    const rec: Rec = {
      n, uuid, parent: str(o.parentUuid) ?? null, time: time ?? this.lastTime ?? 0, side, kind: 'other', blocks: [], results: [],
      meta: undefined, compactSummary: undefined, details: undefined, sourceTool: undefined, msgId: undefined, model: undefined, stop: undefined,
      usage: undefined, apiError: undefined, subtype: undefined, logicalParent: undefined, data: undefined, attachments: undefined,
    }
    this.current = rec
    const attach = this.blockContext
    const message = isObj(o.message) ? o.message : undefined
    if (type === 'user' && message) this.user(rec, o, message, attach)
    else if (type === 'assistant' && message) this.assistant(rec, o, message, attach)
    else if (type === 'system') {
      rec.kind = 'system'
      rec.subtype = str(o.subtype) ?? ''
      rec.logicalParent = str(o.logicalParentUuid)
      rec.data = o
    } else if (type === 'progress') {
      rec.kind = 'progress'
      rec.subtype = isObj(o.data) ? str(o.data.type) : undefined
    } else {
      rec.subtype = type
      rec.data = o
    }
    this.recs.push(rec)
  }

  private bookkeeping(type: string, o: Obj, n: number): void {
    if (type === 'summary') {
      this.summaries.push({ summary: str(o.summary) ?? '', leaf: str(o.leafUuid) ?? '' })
    } else if (type === 'custom-title') this.customTitle = str(o.customTitle) ?? this.customTitle
    else if (type === 'ai-title') this.aiTitle = str(o.aiTitle) ?? this.aiTitle
    else if (type === 'last-prompt') this.lastPromptLeaf = str(o.leafUuid) ?? this.lastPromptLeaf
    else if (type in META_LINES) this.info[type] = parsed(o[META_LINES[type]])
    else if (BOOKKEEPING.has(type)) this.skipped.add(type)
    else {
      this.warnings.add('unknown-line', `line ${n} has type ${JSON.stringify(type)} and no uuid; skipped`, { line: n })
      this.skipped.add(`unknown:${type}`)
    }
  }

  private user(rec: Rec, o: Obj, message: Obj, ctx: BlockContext): void {
    rec.kind = 'user'
    rec.meta = o.isMeta === true
    rec.compactSummary = o.isCompactSummary === true
    rec.sourceTool = str(o.sourceToolAssistantUUID)
    if (o.toolUseResult !== undefined) rec.details = parsed(o.toolUseResult)
    const content = message.content
    if (typeof content === 'string') {
      rec.blocks.push(text(content))
      return
    }
    for (const b of arr(content)) {
      if (isObj(b) && b.type === 'tool_result') {
        rec.results.push({ call: str(b.tool_use_id) ?? '', content: resultContent(b.content, ctx), is_error: b.is_error === true })
      } else {
        const mapped = block(b, ctx)
        if (mapped) rec.blocks.push(mapped)
      }
    }
  }

  private assistant(rec: Rec, o: Obj, message: Obj, ctx: BlockContext): void {
    rec.kind = 'assistant'
    rec.msgId = str(message.id) ?? rec.uuid
    rec.model = str(message.model)
    rec.stop = str(message.stop_reason)
    rec.usage = isObj(message.usage) ? message.usage : undefined
    rec.apiError = o.isApiErrorMessage === true
    if (typeof message.content === 'string') rec.blocks.push(text(message.content))
    for (const b of arr(message.content)) {
      const mapped = block(b, ctx)
      if (mapped) rec.blocks.push(mapped)
    }
  }

  /** Every session in what was pushed: the main chain first, then one per sub-agent run. */
  finish(): SessionImport[] {
    const main: Rec[] = []
    const agents = new Map<string, Rec[]>()
    const inline: Rec[] = []
    for (const r of this.recs) {
      if (r.side === null) main.push(r)
      else if (r.side === '') inline.push(r)
      else {
        const list = agents.get(r.side)
        if (list) list.push(r)
        else agents.set(r.side, [r])
      }
    }
    // Inline (1.0.x) sidechains share the main file: one run per root of their own chains.
    const byUuid = new Map(inline.map((r) => [r.uuid, r]))
    for (const r of inline) {
      let root = r
      const seen = new Set<string>()
      while (root.parent !== null && byUuid.has(root.parent) && !seen.has(root.uuid)) {
        seen.add(root.uuid)
        root = byUuid.get(root.parent)!
      }
      const key = `sidechain-${root.uuid}`
      const list = agents.get(key)
      if (list) list.push(r)
      else agents.set(key, [r])
    }

    const baseId = this.sessionId ?? str(this.info.parentSessionId) ?? `claude-${this.firstTime ?? this.now()}`
    const sessions: SessionImport[] = []
    const links: JsonObject[] = []
    const mainTree = main.length ? this.build(main, baseId) : undefined
    for (const [key, recs] of agents) {
      const agentId = key.startsWith('sidechain-') ? undefined : key
      const id = `${baseId}:${agentId ? `agent-${agentId}` : key}`
      const tree = this.build(recs, id)
      const call = mainTree?.taskFor(agentId, tree.prompt)
      links.push(defined({ session_id: id, agent_id: agentId, tool_call_id: call?.id }))
      sessions.push(this.session(id, tree, defined({
        format: 'claude-code', source_session_id: str(this.info.parentSessionId) ?? baseId, sidechain: true,
        parent_session_id: mainTree ? baseId : undefined, agent_id: agentId, parent_tool_call_id: call?.id,
      }), call?.description))
    }
    if (mainTree) {
      const present = new Set(links.map((l) => l.agent_id))
      for (const [agentId, callId] of mainTree.agentResults) {
        if (present.has(agentId)) continue
        this.warnings.add('subagent-missing', `Task call ${callId} ran sub-agent ${agentId}, whose transcript (subagents/agent-${agentId}.jsonl) is not in this input`, { session_id: baseId })
        links.push({ session_id: `${baseId}:agent-${agentId}`, agent_id: agentId, tool_call_id: callId, present: false })
      }
      const { parentSessionId: _, ...info } = this.info as JsonObject
      const metadata = defined({ format: 'claude-code', source_session_id: baseId, ...info, sidechains: links.length ? links : undefined })
      sessions.unshift(this.session(baseId, mainTree, metadata, (entries) => this.title(main, entries)))
    }
    return sessions
  }

  /** Claude Code's own title, else this file's summary, else the first prompt on the active path. */
  private title(main: Rec[], path: SessionEntry[]): string | undefined {
    if (this.customTitle ?? this.aiTitle) return this.customTitle ?? this.aiTitle
    const ours = new Set(main.map((r) => r.uuid))
    let own: string | undefined
    for (const s of this.summaries) {
      if (ours.has(s.leaf)) own = s.summary
      else this.skipped.add('summary (leaf in another file)')
    }
    if (own) return own
    for (const e of path) {
      if (e.kind !== 'message' || e.message.role !== 'user' || e.origin?.is_meta) continue
      const t = e.message.content.find((b) => b.type === 'text')
      const title = t?.type === 'text' ? promptTitle(t.text) : undefined
      if (title?.trim()) return titleFrom(title)
    }
    return undefined
  }

  private session(id: string, tree: BuiltTree, metadata: JsonObject, title: string | undefined | ((path: SessionEntry[]) => string | undefined)): SessionImport {
    for (const a of tree.attachments) this.attachments.push({ ...a, session_id: id })
    const leafHint = this.lastPromptLeaf === undefined ? undefined : tree.tailOf(this.lastPromptLeaf)
    const active_leaf = leafHint ?? latestLeaf(tree.entries)
    const path = pathTo(new Map(tree.entries.map((e) => [e.id, e])), active_leaf)
    return sessionOf({ session_id: id, title: typeof title === 'function' ? title(path) : title, metadata, entries: tree.entries, active_leaf }, this.now)
  }

  /** One session's tree from its records (file order). */
  private build(recs: Rec[], sessionId: string): BuiltTree {
    const tb = new TreeBuilder()
    const groups = new Map<string, Group>()
    const groupOfLine = new Map<string, Group>()
    const owner = new Map<string, Group>()
    const callInfo = new Map<string, { name: string; input: Json }>()
    for (const r of recs) {
      if (r.kind !== 'assistant') continue
      let g = groups.get(r.msgId!)
      if (!g) groups.set(r.msgId!, (g = { key: r.uuid, parent: r.parent, lines: [], calls: [], results: [] }))
      g.lines.push(r)
      groupOfLine.set(r.uuid, g)
      for (const b of r.blocks) {
        if (b.type !== 'function_call') continue
        g.calls.push(b.id)
        owner.set(b.id, g)
        callInfo.set(b.id, { name: b.function_id, input: b.arguments })
      }
    }
    const warn = (code: string, message: string, r: Rec): void => this.warnings.add(code, message, { session_id: sessionId, line: r.n })
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
          this.placeUser(r, tb, owner, groupOfLine, callInfo, agentResults, warn)
          break
        case 'progress':
          this.skipped.add(`progress${r.subtype ? `/${r.subtype}` : ''}`)
          tb.alias(r.uuid, r.parent)
          break
        case 'system':
          this.placeSystem(r, tb)
          break
        default:
          // Newer record types in the tree (`attachment`, …): kept whole, out of the transcript.
          tb.node(r.uuid, r.parent, [customEntry(r.uuid, r.time, `claude-code/${r.subtype ?? 'other'}`, payload(r.data!))])
      }
    }
    for (const g of groups.values()) {
      const order = (id: string): number => {
        const i = g.calls.indexOf(id)
        return i === -1 ? Infinity : i
      }
      g.results.sort((a, b) => order(a.result.call) - order(b.result.call))
      const entries: SessionEntry[] = [assistantEntry(g)]
      const seen = new Set<string>()
      for (const { rec, result } of g.results) {
        if (seen.has(result.call)) warn('duplicate-result', `tool call ${result.call} has more than one result; both kept in order`, rec)
        seen.add(result.call)
        entries.push(resultEntry(rec, result, callInfo))
      }
      for (const call of g.calls) {
        if (!seen.has(call)) warn('unpaired-call', `tool call ${call} (${callInfo.get(call)?.name}) has no result in the file (the file ends mid-turn or the run was cut off)`, g.lines[0])
      }
      tb.node(g.key, g.parent, entries)
    }
    const missing = new Set<string>()
    const entries = tb.build((m) => {
      if (missing.has(m.missing)) return
      missing.add(m.missing)
      const r = recs.find((x) => x.uuid === m.key.split('#')[0])
      const via = m.parent === m.missing ? '' : ` (through ${m.parent})`
      this.warnings.add('missing-parent', `record ${m.key.split('#')[0]} descends from ${m.missing}${via}, which is not in the file (it starts mid-session); it becomes a root`, { session_id: sessionId, ...(r && { line: r.n }) })
    })
    const first = recs.find((r) => r.kind === 'user' && r.results.length === 0)
    const prompt = first?.blocks.find((b) => b.type === 'text')
    return {
      entries,
      attachments,
      agentResults,
      prompt: prompt?.type === 'text' ? prompt.text : undefined,
      tailOf: (uuid: string) => tb.tailOf(uuid) ?? undefined,
      taskFor: (agentId: string | undefined, prompt: string | undefined) => {
        // 2.x results name the agent; 1.0.x inline runs only match by the prompt they were given.
        const byAgent = agentId === undefined ? undefined : agentResults.get(agentId)
        for (const [id, info] of callInfo) {
          const input = isObj(info.input) ? info.input : {}
          if (id === byAgent || (byAgent === undefined && prompt !== undefined && input.prompt === prompt)) return { id, description: str(input.description) }
        }
        return undefined
      },
    }
  }

  private placeUser(
    r: Rec, tb: TreeBuilder, owner: Map<string, Group>, groupOfLine: Map<string, Group>,
    callInfo: Map<string, { name: string; input: Json }>, agentResults: Map<string, string>, warn: (code: string, message: string, r: Rec) => void,
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
      warn('orphan-result', `tool result for ${result.call} has no matching tool call in the file (it starts mid-turn); kept in place`, r)
      const key = `${r.uuid}#${i}`
      tb.node(key, at, [resultEntry(r, result, callInfo)])
      at = key
    })
    if (!r.blocks.length) return tb.alias(r.uuid, at)
    tb.node(r.uuid, at, [messageEntry(r.uuid, { role: 'user', content: r.blocks, timestamp: r.time }, r.meta ? { is_meta: true } : undefined)])
  }

  private placeSystem(r: Rec, tb: TreeBuilder): void {
    const o = r.data!
    if (r.subtype === 'compact_boundary') {
      // The boundary cuts the chain (parentUuid null); joining it to the pre-compaction leaf
      // keeps one tree, with the summary (filled in by the next line) on a custom entry.
      const m = isObj(o.compactMetadata) ? o.compactMetadata : {}
      const data = compact({ source: 'claude-code', trigger: str(m.trigger), pre_tokens: num(m.preTokens), post_tokens: num(m.postTokens), logical_parent_uuid: r.logicalParent, summary: null })
      tb.node(r.uuid, r.logicalParent ?? r.parent, [customEntry(r.uuid, r.time, 'compaction', toJson(data))])
    } else if (r.subtype === 'microcompact_boundary') {
      const m = isObj(o.microcompactMetadata) ? o.microcompactMetadata : {}
      tb.node(r.uuid, r.parent, [customEntry(r.uuid, r.time, 'microcompaction', toJson({ source: 'claude-code', ...m }))])
    } else if (TELEMETRY.has(r.subtype ?? '')) {
      this.skipped.add(`system/${r.subtype}`)
      tb.alias(r.uuid, r.parent)
    } else {
      tb.node(r.uuid, r.parent, [customEntry(r.uuid, r.time, 'claude-code/system', payload(o))])
    }
  }
}

interface BuiltTree {
  entries: SessionEntry[]
  attachments: Omit<ImportedAttachment, 'session_id'>[]
  /** Sub-agent id → the Task call whose result names it. */
  agentResults: Map<string, string>
  prompt: string | undefined
  tailOf(uuid: string): string | undefined
  taskFor(agentId: string | undefined, prompt: string | undefined): { id: string; description: string | undefined } | undefined
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
    stop_reason: apiError ? 'error' : stop ? (STOP[stop] ?? 'end') : content.some((b) => b.type === 'function_call') ? 'function_call' : 'end',
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

/** Reads Claude Code JSONL files (a session file, and optionally its sub-agent files) line by line. */
export async function readClaudeCode(files: readonly { source: Source; name?: string }[], ctx: ImportContext): Promise<SessionImport[]> {
  const reader = new ClaudeCodeReader(ctx.warnings, ctx.skipped, ctx.now)
  for (const f of files) {
    for await (const batch of lineBatches(f.source, ctx.options)) {
      for (let i = 0; i < batch.lines.length; i++) reader.push(batch.lines[i], batch.first + i, f.name)
    }
  }
  const sessions = reader.finish()
  ctx.attachments.push(...reader.attachments)
  return sessions
}
