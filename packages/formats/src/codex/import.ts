import type {
  ContentBlock,
  FunctionResultMessage,
  Json,
  JsonObject,
  SessionEntry,
  SessionImport,
  Usage,
} from '@colloquy/core'
import { parseDataUrl } from '../input/base64.js'
import type { ImportContext } from '../import/context.js'
import { chain, customEntry, messageEntry, text } from '../session/entries.js'
import type { Source } from '../input/source.js'
import { eachJsonLine } from '../input/records.js'
import { sessionOf } from '../session/session-of.js'
import {
  arr,
  compact,
  count,
  decodeJsonString,
  defined,
  isObj,
  num,
  str,
  toJson,
  toMs,
  type Obj,
} from '../values.js'

// Codex rollout JSONL (spec §2): `{timestamp, type, payload}` lines, or the mid-2025 shape of
// bare response items after a bare header. No tree: order is the only structure; calls and
// outputs pair by `call_id`. The UI stream (`event_msg`) repeats prompts, replies and
// reasoning; it is used only where the model history (`response_item`) lacks them.

interface Item {
  n: number
  time: number
  type: string
  payload: Obj
}

/** Context the harness injects as `user` messages: kept, but not as prompts. */
const INJECTED =
  /^\s*(<(environment_context|user_instructions|user_shell_command|INSTRUCTIONS|turn_aborted)\b|# AGENTS\.md instructions)/

const textOf = (content: unknown): string =>
  arr(content)
    .map((c) => (isObj(c) ? (str(c.text) ?? '') : ''))
    .join('')

function inputBlocks(content: unknown): ContentBlock[] {
  const out: ContentBlock[] = []
  for (const c of arr(content)) {
    if (!isObj(c)) continue
    if (typeof c.text === 'string') out.push(text(c.text))
    else if (c.type === 'input_image') {
      const img = parseDataUrl(str(c.image_url) ?? '')
      out.push(
        img ? { type: 'image', mime: img.mime, data: img.data } : text(`[image: ${str(c.image_url) ?? ''}]`),
      )
    }
  }
  return out
}

function reasoningText(p: Obj): string {
  const content = arr(p.content)
  // Raw reasoning when the provider returned it; usually only the summary is readable.
  if (content.length) return textOf(content)
  return arr(p.summary)
    .map((s) => (isObj(s) ? (str(s.text) ?? '') : ''))
    .filter(Boolean)
    .join('\n\n')
}

/** A function output: plain text, `{output, metadata}` JSON text, `{content, success}`, or parts. */
function output(raw: unknown): { content: ContentBlock[]; details: Json; is_error: boolean } {
  if (Array.isArray(raw)) return { content: inputBlocks(raw), details: null, is_error: false }
  const { value, decoded } = decodeJsonString(raw)
  if (decoded && isObj(value)) {
    if (typeof value.output === 'string') {
      const meta = isObj(value.metadata) ? value.metadata : {}
      const exit = num(meta.exit_code)
      return {
        content: [text(value.output)],
        details: toJson(meta),
        is_error: exit !== undefined && exit !== 0,
      }
    }
    if (typeof value.content === 'string')
      return { content: [text(value.content)], details: toJson(value), is_error: value.success === false }
  }
  if (isObj(raw) && typeof raw.content === 'string')
    return { content: [text(raw.content)], details: toJson(raw), is_error: raw.success === false }
  return {
    content: [text(typeof raw === 'string' ? raw : JSON.stringify(raw ?? null))],
    details: null,
    is_error: false,
  }
}

const usageOf = (u: Obj): Usage =>
  compact({
    input: count(u.input_tokens),
    output: count(u.output_tokens),
    cache_read: count(u.cached_input_tokens),
    reasoning: count(u.reasoning_output_tokens),
  })

/** Normalises one line of either generation to `{type, payload}`. */
function normalise(o: Obj, n: number, lastTime: number): Item | undefined {
  const time = toMs(o.timestamp) ?? lastTime
  if (typeof o.type === 'string' && isObj(o.payload)) return { n, time, type: o.type, payload: o.payload }
  if (o.record_type !== undefined) return undefined
  // Legacy: the bare header, then bare response items.
  if (o.type === undefined && typeof o.id === 'string') return { n, time, type: 'session_meta', payload: o }
  if (typeof o.type === 'string') return { n, time, type: 'response_item', payload: o }
  return undefined
}

export async function readCodex(source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  const items: Item[] = []
  let lastTime = 0
  let legacyState = 0
  await eachJsonLine(source, ctx, (o, n) => {
    const item = normalise(o, n, lastTime)
    if (!item) {
      if (o.record_type !== undefined) legacyState++
      else ctx.warnings.add('unknown-line', `line ${n} is not a rollout record; skipped`, { line: n })
      return
    }
    lastTime = item.time
    items.push(item)
  })
  if (legacyState) ctx.skipped.add('record_type:state', legacyState)
  return items.length ? [build(items, ctx)] : []
}

function build(items: Item[], ctx: ImportContext): SessionImport {
  const skip = (kind: string): void => ctx.skipped.add(kind)
  // What the model history already holds, so the UI copies of it are not imported twice.
  const said = { user: new Set<string>(), assistant: new Set<string>(), reasoning: new Set<string>() }
  for (const { type, payload: p } of items) {
    if (type !== 'response_item') continue
    if (p.type === 'message' && p.role === 'user') said.user.add(textOf(p.content).trim())
    if (p.type === 'message' && p.role === 'assistant') said.assistant.add(textOf(p.content).trim())
    if (p.type === 'reasoning')
      for (const s of arr(p.summary)) if (isObj(s)) said.reasoning.add((str(s.text) ?? '').trim())
  }

  const entries: SessionEntry[] = []
  const calls = new Map<string, string>()
  const answered = new Set<string>()
  let meta: Obj | undefined
  let model = 'unknown'
  let provider = 'openai'
  let title: string | undefined
  let totals: JsonObject | undefined
  let lastTotal: number | undefined
  let pendingUsage: Usage | undefined
  let turn: { first: Item; blocks: ContentBlock[]; usage?: Usage; model: string; phase?: string } | undefined

  const flush = (): void => {
    if (!turn) return
    const hasCall = turn.blocks.some((b) => b.type === 'function_call')
    const message = {
      role: 'assistant' as const,
      content: turn.blocks,
      stop_reason: hasCall ? ('function_call' as const) : ('end' as const),
      model: turn.model,
      provider,
      timestamp: turn.first.time,
      ...(turn.usage && { usage: turn.usage }),
    }
    // Codex Desktop marks each reply `commentary` (between tool calls) or `final_answer`.
    entries.push(
      messageEntry(`line-${turn.first.n}`, message, turn.phase ? { phase: turn.phase } : undefined),
    )
    turn = undefined
  }
  const open = (item: Item): NonNullable<typeof turn> => {
    if (!turn) {
      turn = { first: item, blocks: [], model, ...(pendingUsage && { usage: pendingUsage }) }
      pendingUsage = undefined
    }
    return turn
  }
  const call = (item: Item, id: string, name: string, args: Json): void => {
    calls.set(id, name)
    open(item).blocks.push({ type: 'function_call', id, function_id: name, arguments: args })
  }
  const result = (item: Item, id: string, raw: unknown, entryId = `line-${item.n}`): void => {
    flush()
    const out = output(raw)
    if (!calls.has(id))
      ctx.warnings.add('orphan-result', `output for ${id} has no matching call in the file; kept in place`, {
        line: item.n,
      })
    answered.add(id)
    const message: FunctionResultMessage = {
      role: 'function_result',
      function_call_id: id,
      function_id: calls.get(id) ?? 'unknown',
      content: out.content,
      timestamp: item.time,
      details: out.details,
      is_error: out.is_error,
    }
    entries.push(messageEntry(entryId, message))
  }
  const user = (item: Item, blocks: ContentBlock[]): void => {
    flush()
    entries.push(messageEntry(`line-${item.n}`, { role: 'user', content: blocks, timestamp: item.time }))
  }

  // A user response item not yet followed by its `user_message` copy. Codex writes the copy right
  // after the item; sanitized or re-encoded files may change one text and not the other.
  let uncopiedUser = false
  for (const item of items) {
    const p = item.payload
    const kind = str(p.type) ?? ''
    if (item.type === 'response_item') uncopiedUser = false
    switch (item.type) {
      case 'session_meta':
        // A forked rollout repeats its parent's lines, meta included: the first one is this file's.
        if (meta) skip('session_meta (copied from the parent rollout)')
        else {
          meta = p
          provider = str(p.model_provider) ?? provider
        }
        break
      case 'turn_context':
        model = str(p.model) ?? model
        skip('turn_context')
        break
      case 'compacted':
        flush()
        if (arr(p.replacement_history).length)
          ctx.skipped.add('compacted.replacement_history item', arr(p.replacement_history).length)
        entries.push(
          customEntry(
            `line-${item.n}`,
            item.time,
            'compaction',
            defined({
              source: 'codex',
              summary: str(p.message) ?? null,
              replacement_items: arr(p.replacement_history).length,
            }),
          ),
        )
        break
      case 'response_item':
        if (kind === 'message') {
          const role = str(p.role)
          const t = textOf(p.content)
          if (role === 'assistant') {
            const reply = open(item)
            reply.blocks.push(...inputBlocks(p.content))
            if (str(p.phase)) reply.phase = str(p.phase)
          } else if (role === 'user' && !INJECTED.test(t)) {
            user(item, inputBlocks(p.content))
            uncopiedUser = true
          } else {
            // Injected context and developer/system instructions: kept, out of the transcript.
            flush()
            entries.push(
              customEntry(`line-${item.n}`, item.time, 'codex/context', { role: role ?? null, text: t }),
            )
          }
        } else if (kind === 'reasoning') {
          const enc = str(p.encrypted_content)
          // The encrypted reasoning is what the API needs back; it plays the signature's role.
          open(item).blocks.push(
            enc
              ? { type: 'thinking', text: reasoningText(p), signature: enc }
              : { type: 'thinking', text: reasoningText(p) },
          )
        } else if (kind === 'function_call') {
          call(
            item,
            str(p.call_id) ?? `line-${item.n}`,
            str(p.name) ?? 'unknown',
            toJson(decodeJsonString(p.arguments).value ?? null),
          )
        } else if (kind === 'custom_tool_call') {
          call(item, str(p.call_id) ?? `line-${item.n}`, str(p.name) ?? 'unknown', toJson(p.input ?? null))
        } else if (kind === 'local_shell_call') {
          call(item, str(p.call_id) ?? `line-${item.n}`, 'local_shell', toJson(p.action ?? null))
        } else if (kind === 'web_search_call') {
          // Codex persists only the search action, never its results: the call gets an empty one.
          const id = str(p.id) ?? `line-${item.n}`
          call(item, id, 'web_search', toJson(p.action ?? null))
          result(
            item,
            id,
            JSON.stringify({ output: '', metadata: { status: str(p.status) ?? null } }),
            `line-${item.n}:result`,
          )
        } else if (kind === 'function_call_output' || kind === 'custom_tool_call_output') {
          result(item, str(p.call_id) ?? '', p.output)
        } else if (kind === 'compaction' || kind === 'compaction_summary') {
          // Server-side compaction: only an encrypted summary the API reads back.
          flush()
          entries.push(
            customEntry(
              `line-${item.n}`,
              item.time,
              'compaction',
              defined({ source: 'codex', encrypted_content: str(p.encrypted_content) }),
            ),
          )
        } else if (kind === 'ghost_snapshot') skip('response_item/ghost_snapshot')
        else {
          ctx.warnings.add(
            'unknown-item',
            `line ${item.n}: response item ${JSON.stringify(kind)} kept as a custom entry`,
            { line: item.n },
          )
          flush()
          entries.push(customEntry(`line-${item.n}`, item.time, `codex/${kind}`, toJson(p)))
        }
        break
      case 'event_msg':
        if (kind === 'user_message') {
          const t = str(p.message) ?? ''
          if (said.user.has(t.trim()) || uncopiedUser) {
            uncopiedUser = false
            skip('event_msg/user_message (copy of a response item)')
          } else
            user(item, [
              text(t),
              ...arr(p.images)
                .map((u) => parseDataUrl(str(u) ?? ''))
                .filter((x) => x !== undefined)
                .map((x) => ({ type: 'image' as const, mime: x.mime, data: x.data })),
            ])
        } else if (kind === 'agent_message') {
          const t = str(p.message) ?? ''
          if (said.assistant.has(t.trim())) skip('event_msg/agent_message (copy of a response item)')
          else open(item).blocks.push(text(t))
        } else if (kind === 'agent_reasoning') {
          const t = str(p.text) ?? ''
          if (said.reasoning.has(t.trim())) skip('event_msg/agent_reasoning (copy of a response item)')
          else open(item).blocks.push({ type: 'thinking', text: t })
        } else if (kind === 'token_count') {
          skip('event_msg/token_count')
          const info = isObj(p.info) ? p.info : undefined
          const total = info && isObj(info.total_token_usage) ? info.total_token_usage : undefined
          // Counts are cumulative and often repeated: only a new total is a new model call.
          if (!total || num(total.total_tokens) === lastTotal) break
          lastTotal = num(total.total_tokens)
          totals = toJson(total) as JsonObject
          const last = isObj(info!.last_token_usage) ? usageOf(info!.last_token_usage) : undefined
          if (turn && !turn.usage) turn.usage = last
          else pendingUsage = last
        } else if (kind === 'thread_name_updated') {
          title = str(p.thread_name) ?? str(p.name) ?? title
          skip('event_msg/thread_name_updated')
        } else if (kind === 'turn_aborted' || kind === 'error') {
          flush()
          entries.push(customEntry(`line-${item.n}`, item.time, `codex/${kind}`, toJson(p)))
        } else skip(`event_msg/${kind}`)
        break
      default:
        skip(item.type)
    }
  }
  flush()
  for (const id of calls.keys()) {
    if (!answered.has(id))
      ctx.warnings.add(
        'unpaired-call',
        `call ${id} (${calls.get(id)}) has no output in the file (the file ends mid-turn or the run was cut off)`,
      )
  }

  const id = str(meta?.id) ?? str(meta?.session_id) ?? `codex-${items[0].time}`
  const m = meta ?? {}
  const metadata = defined({
    format: 'codex',
    source_session_id: id,
    cwd: str(m.cwd),
    originator: str(m.originator),
    cli_version: str(m.cli_version),
    source: m.source === undefined ? undefined : toJson(m.source),
    model_provider: str(m.model_provider),
    git: isObj(m.git) ? toJson(m.git) : undefined,
    instructions: str(m.instructions),
    model: model === 'unknown' ? undefined : model,
    total_token_usage: totals,
  })
  chain(entries)
  return sessionOf(
    {
      session_id: id,
      title,
      created_at: toMs(m.timestamp),
      metadata,
      entries,
      active_leaf: entries.at(-1)?.id ?? null,
      ...(str(m.forked_from_id) && { forked_from: str(m.forked_from_id) }),
    },
    ctx.now,
  )
}
