import type {
  AssistantMessage,
  ContentBlock,
  ErrorKind,
  JsonObject,
  SessionEntry,
  SessionImport,
  StopReason,
  Usage,
} from '@colloquy/core'
import { fromBase64, parseDataUrl } from '../input/base64.js'
import type { ImportContext } from '../import/context.js'
import { customEntry, messageEntry, text } from '../session/entries.js'
import { sessionOf } from '../session/session-of.js'
import { TreeBuilder } from '../session/tree.js'
import { compact, count, defined, isObj, num, str, toJson, type Obj } from '../values.js'

// OpenCode sessions (spec §4), whatever they were read from: the JSON storage tree, the
// SQLite database or an `opencode export`. Messages and parts are ordered by id (ids are
// time-ordered); `assistant.parentID` names the user message answered, so an answer to an
// earlier prompt than the latest one is a branch.

export interface OcPart {
  id: string
  data: Obj
}
export interface OcMessage {
  id: string
  /** Undefined when only parts were found (their message file is missing). */
  info: Obj | undefined
  parts: OcPart[]
}
export interface OcSession {
  id: string
  info: Obj | undefined
  messages: OcMessage[]
  todos?: unknown
  project?: Obj
}

const STOP: Record<string, StopReason> = {
  stop: 'end',
  'tool-calls': 'function_call',
  length: 'length',
  error: 'error',
  'content-filter': 'error',
  other: 'end',
  unknown: 'end',
}
const ERROR_KIND: Record<string, ErrorKind> = {
  ProviderAuthError: 'auth_expired',
  ContextOverflowError: 'context_overflow',
  APIError: 'transient',
  MessageOutputLengthError: 'permanent',
  UnknownError: 'permanent',
}
/** Part types that only an assistant message has: used when a message file is missing. */
const ASSISTANT_PARTS = new Set(['tool', 'reasoning', 'step-start', 'step-finish', 'patch', 'snapshot'])

const byId = <T extends { id: string }>(a: T, b: T): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const usageOf = (tokens: unknown, cost: unknown): Usage | undefined => {
  if (!isObj(tokens)) return undefined
  const cache = isObj(tokens.cache) ? tokens.cache : {}
  return compact({
    input: count(tokens.input),
    output: count(tokens.output),
    reasoning: count(tokens.reasoning),
    cache_read: count(cache.read),
    cache_write: count(cache.write),
    cost_usd: num(cost),
  })
}

/** A `file` part: inline data becomes an image (or parked file bytes), a file URL a reference. */
function filePart(p: Obj, ctx: ImportContext, sessionId: string): ContentBlock {
  const url = str(p.url) ?? ''
  const mime = str(p.mime) ?? 'application/octet-stream'
  const name = str(p.filename) ?? url.split('/').at(-1) ?? 'file'
  const inline = parseDataUrl(url)
  if (inline && mime.startsWith('image/')) return { type: 'image', mime, data: inline.data }
  if (inline) {
    const bytes = fromBase64(inline.data)
    const attachment_id = `att-${str(p.id) ?? `${sessionId}-${ctx.attachments.length}`}`
    ctx.attachments.push({ session_id: sessionId, attachment_id, name, mime, data: bytes })
    return { type: 'file', attachment_id, name, mime, size: bytes.byteLength }
  }
  return text(`[file: ${name}](${url})`)
}

interface Step {
  id: string
  blocks: ContentBlock[]
  results: SessionEntry[]
  usage?: Usage
  reason?: string
  time: number
}

class MessageMapper {
  readonly partEntry = new Map<string, string>()
  constructor(
    private readonly ctx: ImportContext,
    private readonly sessionId: string,
  ) {}

  private warn(code: string, message: string): void {
    this.ctx.warnings.add(code, message, { session_id: this.sessionId })
  }

  user(m: OcMessage, time: number): SessionEntry[] {
    const out: SessionEntry[] = []
    let blocks: ContentBlock[] = []
    let first = true
    const flags: Record<string, string[]> = {}
    const flush = (): void => {
      if (!blocks.length) return
      const origin = Object.keys(flags).length ? (flags as JsonObject) : undefined
      out.push(
        messageEntry(
          first ? m.id : `${m.id}:${out.length}`,
          { role: 'user', content: blocks, timestamp: time },
          origin,
        ),
      )
      first = false
      blocks = []
    }
    for (const p of m.parts) {
      const d = p.data
      this.partEntry.set(p.id, first ? m.id : `${m.id}:${out.length}`)
      if (d.type === 'text') {
        blocks.push(text(str(d.text) ?? ''))
        // `ignored`: not sent to the model; `synthetic`: written by the harness. Kept, and named.
        if (d.ignored === true) (flags.ignored_parts ??= []).push(p.id)
        if (d.synthetic === true) (flags.synthetic_parts ??= []).push(p.id)
      } else if (d.type === 'file') blocks.push(filePart({ ...d, id: p.id }, this.ctx, this.sessionId))
      else if (d.type === 'agent') blocks.push(text(`@${str(d.name) ?? ''}`))
      else if (d.type === 'subtask') blocks.push(text(str(d.prompt) ?? ''))
      else if (d.type === 'compaction') {
        flush()
        out.push(
          customEntry(
            p.id,
            time,
            'compaction',
            defined({
              source: 'opencode',
              auto: d.auto === true,
              overflow: d.overflow === true ? true : undefined,
            }),
          ),
        )
      } else this.other(p)
    }
    flush()
    return out
  }

  assistant(m: OcMessage, info: Obj, time: number): SessionEntry[] {
    const out: SessionEntry[] = []
    const model = str(info.modelID) ?? (isObj(info.model) ? str(info.model.modelID) : undefined) ?? 'unknown'
    const provider =
      str(info.providerID) ?? (isObj(info.model) ? str(info.model.providerID) : undefined) ?? 'unknown'
    let step: Step = { id: m.id, blocks: [], results: [], time }
    const steps: Step[] = []
    const close = (): void => {
      if (step.blocks.length || step.results.length || !steps.length) steps.push(step)
    }
    for (const p of m.parts) {
      const d = p.data
      this.partEntry.set(p.id, step.id)
      switch (d.type) {
        case 'step-start':
          if (step.blocks.length || step.results.length) {
            close()
            step = {
              id: p.id,
              blocks: [],
              results: [],
              time: num(isObj(d.time) ? d.time.start : undefined) ?? step.time,
            }
            this.partEntry.set(p.id, step.id)
          }
          this.ctx.skipped.add('part/step-start')
          break
        case 'step-finish':
          step.usage = usageOf(d.tokens, d.cost)
          step.reason = str(d.reason)
          this.ctx.skipped.add('part/step-finish (usage kept)')
          break
        case 'text':
          step.blocks.push(text(str(d.text) ?? ''))
          break
        case 'reasoning':
          step.blocks.push({ type: 'thinking', text: str(d.text) ?? '' })
          break
        case 'tool':
          this.tool(p, step)
          break
        case 'file':
          step.blocks.push(filePart({ ...d, id: p.id }, this.ctx, this.sessionId))
          break
        case 'patch':
        case 'snapshot':
        case 'retry':
        case 'agent':
          // Git snapshot hashes and retry bookkeeping: nothing a transcript shows.
          this.ctx.skipped.add(`part/${d.type}`)
          break
        default:
          this.other(p, step.blocks)
      }
    }
    close()
    const withUsage = steps.some((s) => s.usage)
    steps.forEach((s, i) => {
      const last = i === steps.length - 1
      const hasCall = s.blocks.some((b) => b.type === 'function_call')
      const reason = s.reason ?? (last ? str(info.finish) : undefined)
      const message: AssistantMessage = {
        role: 'assistant',
        content: s.blocks,
        model,
        provider,
        timestamp: s.time,
        stop_reason: reason ? (STOP[reason] ?? 'end') : hasCall ? 'function_call' : 'end',
      }
      if (reason) message.native_stop_reason = reason
      const usage = withUsage ? s.usage : last ? usageOf(info.tokens, info.cost) : undefined
      if (usage && Object.keys(usage).length) message.usage = usage
      const agent = str(info.agent) ?? str(info.mode)
      if (agent) message.agent = agent
      if (last && isObj(info.error)) this.error(message, info.error)
      out.push(
        messageEntry(s.id, message, info.summary === true ? { summary: true } : undefined),
        ...s.results,
      )
    })
    return out
  }

  private error(message: AssistantMessage, error: Obj): void {
    const name = str(error.name) ?? 'UnknownError'
    const data = isObj(error.data) ? error.data : {}
    message.stop_reason = name === 'MessageAbortedError' ? 'aborted' : 'error'
    message.error_message = str(data.message) ?? name
    const kind = ERROR_KIND[name]
    if (kind && name !== 'MessageAbortedError') message.error_kind = kind
  }

  /** A tool part is call and result in one: the call joins the step, the result follows it. */
  private tool(p: OcPart, step: Step): void {
    const d = p.data
    const state = isObj(d.state) ? d.state : {}
    const callId = str(d.callID) ?? p.id
    const name = str(d.tool) ?? 'unknown'
    step.blocks.push({
      type: 'function_call',
      id: callId,
      function_id: name,
      arguments: toJson(state.input ?? null),
    })
    const status = str(state.status)
    if (status !== 'completed' && status !== 'error') {
      this.warn(
        'unpaired-call',
        `tool call ${callId} (${name}) is still ${status ?? 'without state'}; it has no result`,
      )
      return
    }
    const time = isObj(state.time) ? state.time : {}
    const content: ContentBlock[] = [
      text(status === 'error' ? (str(state.error) ?? '') : (str(state.output) ?? '')),
    ]
    for (const a of Array.isArray(state.attachments) ? state.attachments : [])
      if (isObj(a)) content.push(filePart(a, this.ctx, this.sessionId))
    const details = defined({
      title: str(state.title),
      metadata: isObj(state.metadata) ? toJson(state.metadata) : undefined,
      time: toJson(time),
      // Pruned from the model's context later ("[Old tool result content cleared]").
      compacted: time.compacted !== undefined ? true : undefined,
    })
    step.results.push(
      messageEntry(p.id, {
        role: 'function_result',
        function_call_id: callId,
        function_id: name,
        content,
        timestamp: num(time.end) ?? num(time.start) ?? step.time,
        details,
        is_error: status === 'error',
      }),
    )
  }

  private other(p: OcPart, into?: ContentBlock[]): void {
    this.warn(
      'unknown-part',
      `part ${p.id} of type ${JSON.stringify(p.data.type)} has no Colloquy equivalent; kept as JSON text`,
    )
    into?.push(text(JSON.stringify(p.data)))
  }
}

function toSession(
  s: OcSession,
  ctx: ImportContext,
  links: Map<string, { parent: string; call: string }>,
  children: JsonObject[],
): SessionImport {
  const info = s.info ?? {}
  if (!s.info)
    ctx.warnings.add(
      'session-missing',
      `session ${s.id} has messages but no session record; its title and times come from its messages`,
      { session_id: s.id },
    )
  const mapper = new MessageMapper(ctx, s.id)
  const tb = new TreeBuilder()
  const lastOfTurn = new Map<string, string>()
  let prev: string | null = null
  for (const m of [...s.messages].sort(byId)) {
    m.parts.sort(byId)
    let mi = m.info
    if (!mi) {
      const role = m.parts.some((p) => ASSISTANT_PARTS.has(str(p.data.type) ?? '')) ? 'assistant' : 'user'
      ctx.warnings.add(
        'message-missing',
        `message ${m.id} has ${m.parts.length} part(s) but no message record; imported as a ${role} message`,
        { session_id: s.id },
      )
      mi = { role }
    }
    const t = isObj(mi.time) ? mi.time : {}
    const time =
      num(t.created) ??
      num(m.parts[0] && isObj(m.parts[0].data.time) ? m.parts[0].data.time.start : undefined) ??
      num(isObj(info.time) ? info.time.created : undefined) ??
      0
    const answers = str(mi.parentID)
    const entries = mi.role === 'assistant' ? mapper.assistant(m, mi, time) : mapper.user(m, time)
    let parent = prev
    if (mi.role === 'assistant' && answers !== undefined) {
      parent = lastOfTurn.get(answers) ?? prev
      lastOfTurn.set(answers, m.id)
    } else if (mi.role !== 'assistant') lastOfTurn.set(m.id, m.id)
    tb.node(m.id, parent, entries)
    prev = m.id
  }
  const entries = tb.build()
  let leaf = prev === null ? null : (tb.tailOf(prev) ?? null)
  const revert = isObj(info.revert) ? info.revert : undefined
  if (revert) {
    // `/undo` hides the reverted message (or, with a part, from that part's entry) and what follows.
    const from = str(revert.partID)
      ? mapper.partEntry.get(str(revert.partID)!)
      : tb.entries(str(revert.messageID) ?? '')?.[0]?.id
    const hidden = entries.find((e) => e.id === from)
    if (hidden) leaf = hidden.parent_id
    else
      ctx.warnings.add(
        'revert-target-missing',
        `session ${s.id} is reverted to ${str(revert.messageID)}, which is not among its messages; the revert is ignored`,
        { session_id: s.id },
      )
  }
  const time = isObj(info.time) ? info.time : {}
  const link = links.get(s.id)
  const summary = isObj(info.summary) ? toJson(info.summary) : undefined
  return sessionOf(
    {
      session_id: s.id,
      title: str(info.title),
      created_at: num(time.created),
      updated_at: num(time.updated),
      metadata: defined({
        format: 'opencode',
        source_session_id: s.id,
        project_id: str(info.projectID),
        directory: str(info.directory),
        version: str(info.version),
        slug: str(info.slug),
        parent_session_id: str(info.parentID),
        parent_tool_call_id: link?.call,
        sidechain: str(info.parentID) ? true : undefined,
        share_url: isObj(info.share) ? str(info.share.url) : undefined,
        revert: revert ? toJson(revert) : undefined,
        summary,
        todos: s.todos === undefined ? undefined : toJson(s.todos),
        worktree: s.project ? str(s.project.worktree) : undefined,
        sidechains: children.length ? children : undefined,
      }),
      entries,
      active_leaf: leaf,
    },
    ctx.now,
  )
}

/** Colloquy sessions from OpenCode sessions: parents before their sub-agent sessions. */
export function openCodeSessions(list: OcSession[], ctx: ImportContext): SessionImport[] {
  // A task tool's state.metadata.sessionId names the sub-agent session it ran.
  const links = new Map<string, { parent: string; call: string }>()
  for (const s of list) {
    for (const m of s.messages) {
      for (const p of m.parts) {
        const state = isObj(p.data.state) ? p.data.state : {}
        const child = isObj(state.metadata) ? str(state.metadata.sessionId) : undefined
        if (p.data.type === 'tool' && child)
          links.set(child, { parent: s.id, call: str(p.data.callID) ?? p.id })
      }
    }
  }
  const ids = new Set(list.map((s) => s.id))
  const parentOf = (s: OcSession): string | undefined => str(s.info?.parentID) ?? links.get(s.id)?.parent
  const created = (s: OcSession): number =>
    num(isObj(s.info?.time) ? (s.info!.time as Obj).created : undefined) ?? 0
  const roots = list.filter((s) => !ids.has(parentOf(s) ?? '')).sort((a, b) => created(a) - created(b))
  const out: SessionImport[] = []
  const done = new Set<string>()
  const visit = (s: OcSession): void => {
    if (done.has(s.id)) return
    done.add(s.id)
    const kids = list.filter((k) => parentOf(k) === s.id).sort((a, b) => created(a) - created(b))
    out.push(
      toSession(
        s,
        ctx,
        links,
        kids.map((k) => defined({ session_id: k.id, tool_call_id: links.get(k.id)?.call })),
      ),
    )
    kids.forEach(visit)
  }
  roots.forEach(visit)
  // Sessions whose parent chain loops reach no root: still imported, never silently lost.
  list.forEach(visit)
  return out
}
