import type { AssistantMessage, ContentBlock, SessionEntry, SessionImport } from '@colloquy/core'
import { fromBase64 } from '../input/base64.js'
import type { ImportContext } from '../import/context.js'
import { customEntry, messageEntry, text } from '../session/entries.js'
import type { Source } from '../input/source.js'
import { eachRecord } from '../input/records.js'
import { sessionOf } from '../session/session-of.js'
import { TreeBuilder } from '../session/tree.js'
import { arr, compact, count, defined, isObj, str, toJson, toMs, type Obj } from '../values.js'

// Gemini CLI chat recordings (spec §3). The JSON era is one `ConversationRecord`; the 2026
// JSONL era is an append-only log of message records (a later record with the same id
// replaces the earlier), `$set` metadata/checkpoint records and `$rewindTo` cuts. Both are
// replayed by `GeminiLog`: a record is a message appended after the current last one, so a
// rewind's discarded tail stays in the tree as a sibling branch of what came after it.

const FINAL = new Set(['success', 'error', 'cancelled'])

class GeminiLog {
  readonly meta: Obj = {}
  /** Node keys of the live conversation, in order. */
  current: string[] = []
  readonly records = new Map<string, Obj>()
  readonly parents = new Map<string, string | null>()
  /** Message id → the node key it is live under (a rewound id re-appended gets a new key). */
  private readonly keyOf = new Map<string, string>()
  private checkpoints = 0
  rewinds = 0

  constructor(private readonly ctx: ImportContext) {}

  apply(o: Obj, n: number): void {
    if (isObj(o.$set)) {
      const { messages, ...rest } = o.$set
      Object.assign(this.meta, rest)
      if (Array.isArray(messages)) this.checkpoint(messages)
    } else if ('$rewindTo' in o) {
      this.rewinds++
      const key = this.keyOf.get(str(o.$rewindTo) ?? '')
      const at = key === undefined ? -1 : this.current.indexOf(key)
      // An unknown id clears everything (gemini-cli's own rule).
      this.current = at === -1 ? [] : this.current.slice(0, at)
    } else if (typeof o.id === 'string' && typeof o.type === 'string') {
      this.message(o)
    } else if (typeof o.sessionId === 'string') {
      const { messages, ...rest } = o
      Object.assign(this.meta, rest)
      if (Array.isArray(messages)) this.checkpoint(messages)
    } else {
      this.ctx.warnings.add(
        'unknown-line',
        `line ${n} is neither a message, metadata, $set nor $rewindTo; skipped`,
        { line: n },
      )
    }
  }

  private message(o: Obj): void {
    const id = o.id as string
    const live = this.keyOf.get(id)
    if (live !== undefined && this.current.includes(live)) {
      // Re-appended while its tool calls progressed: the newest version wins, in place.
      this.records.set(live, o)
      return
    }
    let key = id
    for (let k = 2; this.records.has(key); k++) key = `${id}~${k}`
    this.keyOf.set(id, key)
    this.records.set(key, o)
    this.parents.set(key, this.current.at(-1) ?? null)
    this.current.push(key)
  }

  /** `$set.messages`: the conversation is replaced by this list (after /compress, or a rewrite). */
  private checkpoint(messages: unknown[]): void {
    const list = messages.filter(isObj)
    const keys = list.map((m) => this.keyOf.get(str(m.id) ?? ''))
    const prefix = keys.every((k, i) => k !== undefined && this.current[i] === k)
    if (this.current.length === 0 || prefix) {
      // The same messages again (maybe fewer): update them in place; a dropped tail stays a branch.
      if (prefix) this.current = this.current.slice(0, list.length)
      for (const m of list) this.message(m)
      return
    }
    // A different history (compression): the old one stays above a marker, the new one follows.
    const marker = `$checkpoint-${++this.checkpoints}`
    this.records.set(marker, {
      $checkpoint: true,
      count: list.length,
      timestamp: str(list[0]?.timestamp) ?? str(this.meta.lastUpdated),
    })
    this.parents.set(marker, this.current.at(-1) ?? null)
    this.current = [marker]
    for (const m of list) this.message(m)
  }
}

function parts(content: unknown, ctx: ImportContext): ContentBlock[] {
  if (typeof content === 'string') return content ? [text(content)] : []
  const out: ContentBlock[] = []
  for (const p of Array.isArray(content) ? content : [content]) {
    if (typeof p === 'string') out.push(text(p))
    else if (!isObj(p)) continue
    else if (typeof p.text === 'string')
      out.push(p.thought === true ? { type: 'thinking', text: p.text } : text(p.text))
    else if (isObj(p.inlineData)) {
      const mime = str(p.inlineData.mimeType) ?? 'application/octet-stream'
      const data = str(p.inlineData.data) ?? ''
      if (mime.startsWith('image/')) out.push({ type: 'image', mime, data })
      else {
        const name = `inline.${mime.split('/')[1] ?? 'bin'}`
        const attachment_id = `att-gemini-${ctx.attachments.length}`
        const bytes = fromBase64(data)
        ctx.attachments.push({ session_id: '', attachment_id, name, mime, data: bytes })
        out.push({ type: 'file', attachment_id, name, mime, size: bytes.byteLength })
      }
    } else if (isObj(p.fileData)) out.push(text(`[file: ${str(p.fileData.fileUri) ?? ''}]`))
    else {
      ctx.warnings.add(
        'unknown-part',
        `a content part with keys ${Object.keys(p).join(', ')} is kept as JSON text`,
      )
      out.push(text(JSON.stringify(p)))
    }
  }
  return out
}

/** A tool call's embedded result (`result[].functionResponse.response`) as content. */
function resultOf(call: Obj, ctx: ImportContext): { content: ContentBlock[]; is_error: boolean } {
  const content: ContentBlock[] = []
  let is_error = call.status === 'error' || call.status === 'cancelled'
  for (const r of arr(call.result)) {
    if (!isObj(r)) continue
    if (isObj(r.functionResponse)) {
      const resp = r.functionResponse.response
      if (isObj(resp) && typeof resp.output === 'string') content.push(text(resp.output))
      else if (isObj(resp) && resp.error !== undefined) {
        is_error = true
        content.push(text(typeof resp.error === 'string' ? resp.error : JSON.stringify(resp.error)))
      } else content.push(text(JSON.stringify(resp ?? null)))
    } else content.push(...parts(r, ctx))
  }
  if (!content.length && call.status === 'cancelled') content.push(text('[cancelled]'))
  return { content, is_error }
}

function entriesOf(key: string, o: Obj, ctx: ImportContext, sessionId: string): SessionEntry[] {
  const time = toMs(o.timestamp) ?? 0
  if (o.$checkpoint === true)
    return [
      customEntry(
        key,
        time,
        'compaction',
        defined({ source: 'gemini', kind: 'checkpoint', messages: count(o.count) }),
      ),
    ]
  const type = str(o.type)
  if (type === 'user')
    return [messageEntry(key, { role: 'user', content: parts(o.content, ctx), timestamp: time })]
  // CLI notices (info, warning, error) are shown in the chat, so they stay visible messages.
  if (type !== 'gemini')
    return [
      messageEntry(key, {
        role: 'custom',
        custom_type: `gemini/${type ?? 'unknown'}`,
        content: parts(o.content, ctx),
        timestamp: time,
      }),
    ]
  const content: ContentBlock[] = []
  for (const t of arr(o.thoughts)) {
    if (!isObj(t)) continue
    const subject = str(t.subject)?.trim()
    const description = str(t.description)?.trim() ?? ''
    content.push({ type: 'thinking', text: subject ? `**${subject}**\n\n${description}` : description })
  }
  content.push(...parts(o.content, ctx))
  const calls = arr(o.toolCalls).filter(isObj)
  for (const c of calls)
    content.push({
      type: 'function_call',
      id: str(c.id) ?? '',
      function_id: str(c.name) ?? 'unknown',
      arguments: toJson(c.args ?? null),
    })
  const tokens = isObj(o.tokens) ? o.tokens : undefined
  const message: AssistantMessage = {
    role: 'assistant',
    content,
    stop_reason: calls.length ? 'function_call' : 'end',
    model: str(o.model) ?? 'unknown',
    provider: 'google',
    timestamp: time,
  }
  if (tokens)
    message.usage = compact({
      input: count(tokens.input),
      output: count(tokens.output),
      cache_read: count(tokens.cached),
      reasoning: count(tokens.thoughts),
    })
  const out: SessionEntry[] = [messageEntry(key, message)]
  for (const c of calls) {
    // The result sits inside the call record; Colloquy keeps call and result apart.
    const id = str(c.id) ?? ''
    if (c.result == null && !FINAL.has(str(c.status) ?? '')) {
      ctx.warnings.add(
        'unpaired-call',
        `tool call ${id} is still ${String(c.status)} in the recording; it has no result`,
        { session_id: sessionId },
      )
      continue
    }
    const r = resultOf(c, ctx)
    out.push(
      messageEntry(`${key}:${id}`, {
        role: 'function_result',
        function_call_id: id,
        function_id: str(c.name) ?? 'unknown',
        content: r.content,
        timestamp: toMs(c.timestamp) ?? time,
        details: toJson(
          defined({
            status: str(c.status),
            displayName: str(c.displayName),
            description: str(c.description),
            resultDisplay: toJson(c.resultDisplay ?? null),
            agentId: str(c.agentId),
          }),
        ),
        is_error: r.is_error,
      }),
    )
  }
  return out
}

export async function readGemini(source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  const log = new GeminiLog(ctx)
  // The JSON era is one document; the JSONL era is a log, one record per line.
  await eachRecord(source, ctx, (o, n) => log.apply(o, n))
  if (!log.records.size && typeof log.meta.sessionId !== 'string') return []
  const id = str(log.meta.sessionId) ?? `gemini-${ctx.now()}`
  const tb = new TreeBuilder()
  for (const [key, rec] of log.records)
    tb.node(key, log.parents.get(key) ?? null, entriesOf(key, rec, ctx, id))
  const entries = tb.build()
  for (const a of ctx.attachments) if (a.session_id === '') a.session_id = id
  if (log.rewinds) ctx.skipped.add('$rewindTo (discarded messages kept as a branch)', log.rewinds)
  if (log.meta.memoryScratchpad !== undefined) ctx.skipped.add('memoryScratchpad')
  const m = log.meta
  return [
    sessionOf(
      {
        session_id: id,
        title: str(m.summary),
        created_at: toMs(m.startTime),
        updated_at: toMs(m.lastUpdated),
        metadata: defined({
          format: 'gemini',
          source_session_id: id,
          project_hash: str(m.projectHash),
          kind: str(m.kind),
          directories: Array.isArray(m.directories) ? toJson(m.directories) : undefined,
          sidechain: m.kind === 'subagent' ? true : undefined,
        }),
        entries,
        active_leaf: log.current.length ? (tb.tailOf(log.current.at(-1)!) ?? null) : null,
      },
      ctx.now,
    ),
  ]
}
