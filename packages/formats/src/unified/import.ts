import {
  type AssistantMessage,
  type ContentBlock,
  type JsonObject,
  type SessionEntry,
  type SessionImport,
  type StopReason,
} from '@colloquy/core'
import { parseSessionEntry } from '@colloquy/core/wire'
import type { ImportContext } from '../import/context.js'
import { messageEntry, text } from '../session/entries.js'
import { FormatError } from '../errors.js'
import type { Source } from '../input/source.js'
import { eachRecord } from '../input/records.js'
import { sessionOf } from '../session/session-of.js'
import { latestLeaf, TreeBuilder } from '../session/tree.js'
import { fromUnifiedBlock, resultContent } from './blocks.js'
import { arr, compact, count, defined, isObj, str, toJson, toMs, type Obj } from '../values.js'

// Unified agent-history JSON 1.0 (seeds/001, spec §5.1): one object per session (`.json`),
// or one per line (`.ndjson`). `uuid`/`parent_uuid` make the tree, `graph.active_path` names
// the active branch. Documents written by `exportUnified` also carry `colloquy` extensions
// (on the session and in each message's metadata) that make the round trip exact.

const PROVIDER: Record<string, string> = {
  'claude-code': 'anthropic',
  claude: 'anthropic',
  codex: 'openai',
  gemini: 'google',
}
const STOP: Record<string, StopReason> = {
  end_turn: 'end',
  stop_sequence: 'end',
  end: 'end',
  tool_use: 'function_call',
  function_call: 'function_call',
  max_tokens: 'length',
  length: 'length',
  error: 'error',
  aborted: 'aborted',
}

class DocReader {
  private readonly callNames = new Map<string, string>()
  private lastTime = 0

  constructor(
    private readonly ctx: ImportContext,
    private readonly sessionId: string,
    private readonly provider: string,
  ) {}

  private warn(code: string, message: string): void {
    this.ctx.warnings.add(code, message, { session_id: this.sessionId })
  }

  private blocks(content: unknown, key: string): ContentBlock[] {
    if (typeof content === 'string') return [text(content)]
    const out: ContentBlock[] = []
    for (const b of arr(content)) {
      const mapped = fromUnifiedBlock(b)
      if (mapped?.type === 'function_call') this.callNames.set(mapped.id, mapped.function_id)
      if (mapped) out.push(mapped)
      else {
        this.warn(
          'unknown-block',
          `message ${key}: a block of type ${JSON.stringify(isObj(b) ? b.type : typeof b)} is kept as JSON text`,
        )
        out.push(text(JSON.stringify(b)))
      }
    }
    return out
  }

  /** A message written by `exportUnified`: its extension restores the entry exactly. */
  private extension(m: Obj, key: string, parent: string | null): SessionEntry[] | undefined {
    const meta = isObj(m.metadata) ? m.metadata : {}
    const ext = isObj(meta.colloquy) ? meta.colloquy : undefined
    if (!ext) return undefined
    const base = {
      id: key,
      parent_id: parent,
      timestamp: ext.timestamp,
      revision: ext.revision ?? 0,
      ...(ext.origin !== undefined && { origin: ext.origin }),
    }
    let entry: unknown
    if (ext.kind === 'custom')
      entry = { ...base, kind: 'custom', custom_type: ext.custom_type, data: ext.data ?? null }
    else if (isObj(ext.message)) {
      const result = arr(m.content).find((b) => isObj(b) && b.type === 'tool_result')
      const content =
        ext.message.role === 'function_result' && isObj(result)
          ? resultContent(result)
          : this.blocks(m.content, key)
      entry = { ...base, kind: 'message', message: { ...ext.message, content } }
    }
    try {
      const e = structuredClone(parseSessionEntry(entry, `messages[${key}]`)) as SessionEntry
      if (e.kind === 'message')
        for (const b of e.message.content)
          if (b.type === 'function_call') this.callNames.set(b.id, b.function_id)
      return [e]
    } catch (err) {
      this.warn(
        'bad-extension',
        `message ${key}: its colloquy extension is invalid (${(err as Error).message}); read as plain unified JSON`,
      )
      return undefined
    }
  }

  entries(m: Obj, key: string, parent: string | null): SessionEntry[] {
    const exact = this.extension(m, key, parent)
    if (exact) return exact
    const meta = isObj(m.metadata) ? m.metadata : {}
    const time = (this.lastTime = toMs(m.timestamp) ?? this.lastTime)
    const origin = meta.is_meta === true ? { is_meta: true } : undefined
    const role = str(m.role)
    if (role === 'assistant') {
      const model = isObj(meta.model) ? meta.model : {}
      const tokens = isObj(meta.token_usage) ? meta.token_usage : undefined
      const content = this.blocks(m.content, key)
      const native = str(model.stop_reason)
      const message: AssistantMessage = {
        role: 'assistant',
        content,
        model: str(model.name) ?? 'unknown',
        provider: this.provider,
        timestamp: time,
        stop_reason: native
          ? (STOP[native] ?? 'end')
          : content.some((b) => b.type === 'function_call')
            ? 'function_call'
            : 'end',
      }
      if (native) message.native_stop_reason = native
      if (tokens)
        message.usage = compact({
          input: count(tokens.input_tokens),
          output: count(tokens.output_tokens),
          cache_write: count(tokens.cache_creation_tokens),
          cache_read: count(tokens.cache_read_tokens),
        })
      return [messageEntry(key, message, origin)]
    }
    if (role === 'system')
      return [
        messageEntry(
          key,
          { role: 'custom', custom_type: 'system', content: this.blocks(m.content, key), timestamp: time },
          origin,
        ),
      ]
    if (role !== 'user')
      this.warn('unknown-role', `message ${key} has role ${JSON.stringify(role)}; read as a user message`)
    // Tool results ride in user messages (as in the Claude API); Colloquy gives each its own entry.
    const blocks = this.blocks(m.content, key)
    const results = blocks.filter((b) => b.type === 'function_result')
    const rest = blocks.filter((b) => b.type !== 'function_result')
    const out: SessionEntry[] = results.map((r) => {
      const raw = arr(m.content).find(
        (b) =>
          isObj(b) &&
          b.type === 'tool_result' &&
          (b.tool_id === r.function_call_id || b.tool_use_id === r.function_call_id),
      )
      const name =
        (isObj(raw) ? str(raw.tool_name) : undefined) ?? this.callNames.get(r.function_call_id) ?? 'unknown'
      return messageEntry(
        results.length === 1 && !rest.length ? key : `${key}:${r.function_call_id}`,
        {
          role: 'function_result',
          function_call_id: r.function_call_id,
          function_id: name,
          content: r.content,
          timestamp: time,
          details: null,
          is_error: r.is_error === true,
        },
        origin,
      )
    })
    if (rest.length || !results.length)
      out.push(messageEntry(key, { role: 'user', content: rest, timestamp: time }, origin))
    return out
  }
}

function sessionFromDoc(doc: Obj, n: number, ctx: ImportContext): SessionImport {
  const version = str(doc.schema_version) ?? ''
  if (doc.type === 'header' || version.startsWith('2')) {
    throw new FormatError(
      'format/unsupported',
      `unified agent-history schema ${version || '2.0'} is not supported (only 1.0)`,
    )
  }
  const s = isObj(doc.session) ? doc.session : {}
  const id = str(s.id) ?? `unified-${n}`
  if (!version.startsWith('1.'))
    ctx.warnings.add(
      'schema-version',
      `record ${n}: schema_version ${JSON.stringify(version)} is not 1.x; read as 1.0`,
      { session_id: id },
    )
  const agent = str(doc.agent) ?? ''
  const reader = new DocReader(ctx, id, PROVIDER[agent] ?? 'unknown')
  const tb = new TreeBuilder()
  const parentOf = new Map<string, string | null>()
  let prev: string | null = null
  arr(doc.messages).forEach((m, i) => {
    if (!isObj(m)) return
    let key = str(m.uuid) ?? `m${typeof m.index === 'number' ? m.index : i + 1}`
    while (tb.has(key)) {
      ctx.warnings.add('duplicate-uuid', `message uuid ${key} appears twice; the second is renamed`, {
        session_id: id,
      })
      key = `${key}~`
    }
    // Without `parent_uuid` (older or linear exports) messages simply follow each other.
    const parent = 'parent_uuid' in m ? (str(m.parent_uuid) ?? null) : prev
    parentOf.set(key, parent)
    tb.node(key, parent, reader.entries(m, key, parent))
    prev = key
  })
  const entries = tb.build((miss) =>
    ctx.warnings.add(
      'missing-parent',
      `message ${miss.key} names parent ${miss.missing}, which is not in the document; it becomes a root`,
      { session_id: id },
    ),
  )
  const graph = isObj(doc.graph) ? doc.graph : {}
  checkForks(graph, parentOf, ctx, id)
  const path = arr(graph.active_path)
    .map((u) => str(u))
    .filter((u): u is string => u !== undefined)
  let leaf: string | null = latestLeaf(entries)
  if (path.length) {
    const tail = tb.tailOf(path.at(-1)!)
    const chained = path.every(
      (u, i) => parentOf.has(u) && parentOf.get(u) === (i === 0 ? null : path[i - 1]),
    )
    if (!chained)
      ctx.warnings.add(
        'graph-mismatch',
        `graph.active_path is not a root-to-leaf chain of parent_uuid links; its last message is used as the active leaf`,
        { session_id: id },
      )
    if (tail) leaf = tail
    else
      ctx.warnings.add(
        'graph-mismatch',
        `graph.active_path ends at ${path.at(-1)}, which is not a message; the newest leaf is used`,
        { session_id: id },
      )
  }
  const ext = isObj(s.colloquy) ? s.colloquy : undefined
  const source = isObj(s.source) ? s.source : {}
  const session = sessionOf(
    {
      session_id: id,
      title: str(ext?.title),
      created_at: toMs(ext?.created_at) ?? toMs(s.started_at),
      updated_at: toMs(ext?.updated_at) ?? toMs(s.ended_at),
      metadata: isObj(ext?.metadata)
        ? (toJson(ext!.metadata) as JsonObject)
        : defined({
            format: agent || undefined,
            source_session_id: id,
            cwd: str(s.workspace) || undefined,
            source_path: str(source.path) || undefined,
            sidechain: s.is_agent_session === true ? true : undefined,
            parent_session_id: str(s.parent_session_id),
            agent_id: str(s.agent_id),
          }),
      entries,
      active_leaf: leaf,
      ...(str(ext?.forked_from) && { forked_from: str(ext?.forked_from) }),
    },
    ctx.now,
  )
  if (ext) {
    // What `sessionOf` would otherwise default.
    const meta = session.meta
    session.meta = {
      ...meta,
      description: str(ext.description) ?? meta.description,
      ...(typeof ext.status === 'string' && { status: ext.status as typeof meta.status }),
      ...(typeof ext.kind === 'string' && { kind: ext.kind as typeof meta.kind }),
    }
  }
  return session
}

/** `graph.fork_points` is derived data: say so when it disagrees with the parent links. */
function checkForks(graph: Obj, parentOf: Map<string, string | null>, ctx: ImportContext, id: string): void {
  if (!Array.isArray(graph.fork_points)) return
  const kids = new Map<string, number>()
  for (const p of parentOf.values()) if (p !== null) kids.set(p, (kids.get(p) ?? 0) + 1)
  const actual = [...kids]
    .filter(([, n]) => n > 1)
    .map(([u]) => u)
    .sort()
  const declared = graph.fork_points
    .map((f) => (isObj(f) ? str(f.uuid) : undefined))
    .filter((u): u is string => u !== undefined)
    .sort()
  if (actual.join() !== declared.join()) {
    ctx.warnings.add(
      'graph-mismatch',
      `graph.fork_points lists [${declared.join(', ')}] but parent_uuid links fork at [${actual.join(', ')}]; the links are used`,
      { session_id: id },
    )
  }
}

export async function readUnified(source: Source, ctx: ImportContext): Promise<SessionImport[]> {
  const sessions: SessionImport[] = []
  await eachRecord(source, ctx, (o, n) => sessions.push(sessionFromDoc(o, n, ctx)))
  return sessions
}
