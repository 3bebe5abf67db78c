import type { JsonObject, SessionEntry, SessionImport } from '@colloquy/core'
import { topological } from '../session/inspect.js'
import { childrenOf, pathTo } from '../session/tree.js'
import { toolResult, toUnifiedBlock } from './blocks.js'
import { iso, type Obj } from '../values.js'

// Unified agent-history JSON 1.0 out: every entry of every branch, `graph.fork_points` and
// `graph.active_path`. The 1.0 fields carry what 1.0 can say; a `colloquy` object (in
// `session` and in each message's `metadata`) carries the rest, so `importTranscript` of the
// output rebuilds the same tree: same ids, parents, content and active leaf.

export interface UnifiedExportOptions {
  /** `export_timestamp`; default now. */
  exportedAt?: number
}

const AGENT: Record<string, string> = { 'claude-code': 'claude-code', codex: 'codex', gemini: 'gemini' }

function roleOf(e: SessionEntry): 'user' | 'assistant' | 'system' {
  if (e.kind === 'custom') return 'system'
  const r = e.message.role
  return r === 'assistant' ? 'assistant' : r === 'custom' ? 'system' : 'user'
}

function content(e: SessionEntry, callNames: Map<string, string>): Obj[] {
  if (e.kind === 'custom') return [{ type: 'text', text: `[${e.custom_type}]` }]
  const m = e.message
  // Tool results stay user messages holding one tool_result block, as 1.0 (and Claude) has them.
  if (m.role === 'function_result')
    return [toolResult(m.function_call_id, m.function_id, m.content, m.is_error)]
  return m.content.map((b) =>
    toUnifiedBlock(b, b.type === 'function_result' ? callNames.get(b.function_call_id) : undefined),
  )
}

function metadata(e: SessionEntry): Obj {
  const { id: _id, parent_id: _parent, ...rest } = e
  // The extension is the entry minus what the 1.0 fields already hold (ids, parent, content).
  let ext: Obj = { ...rest }
  if (rest.kind === 'message') {
    const { content: _content, ...message } = rest.message
    ext = { ...rest, message }
  }
  const out: Obj = { colloquy: ext }
  if (e.origin?.is_meta === true) out.is_meta = true
  if (e.kind === 'message' && e.message.role === 'assistant') {
    const m = e.message
    out.model = { name: m.model, stop_reason: m.native_stop_reason ?? m.stop_reason, stop_sequence: null }
    if (m.usage) {
      out.token_usage = {
        input_tokens: m.usage.input ?? 0,
        output_tokens: m.usage.output ?? 0,
        cache_creation_tokens: m.usage.cache_write ?? 0,
        cache_read_tokens: m.usage.cache_read ?? 0,
      }
    }
  }
  return out
}

/** One session as a unified 1.0 document (a plain object, ready for `JSON.stringify`). */
export function toUnified(session: SessionImport, options: UnifiedExportOptions = {}): Obj {
  const { meta, entries, active_leaf } = session
  const md: JsonObject = meta.metadata ?? {}
  const children = childrenOf(entries)
  const ordered = topological(entries, children)
  const index = new Map(ordered.map((e, i) => [e.id, i + 1]))
  const callNames = new Map<string, string>()
  for (const e of entries) {
    if (e.kind === 'message')
      for (const b of e.message.content) if (b.type === 'function_call') callNames.set(b.id, b.function_id)
  }
  const workspace = typeof md.cwd === 'string' ? md.cwd : typeof md.directory === 'string' ? md.directory : ''
  const forks = [...children].filter(([parent, kids]) => parent !== null && kids.length > 1)
  const path = pathTo(new Map(entries.map((e) => [e.id, e])), active_leaf)
  const { session_id, message_count: _count, ...restMeta } = meta
  return {
    schema_version: '1.0',
    export_timestamp: iso(options.exportedAt ?? Date.now()),
    agent:
      (typeof md.format === 'string' && AGENT[md.format]) ||
      (typeof md.format === 'string' ? md.format : 'colloquy'),
    session: {
      id: session_id,
      workspace,
      workspace_encoded: workspace.replace(/[^a-zA-Z0-9]/g, '-'),
      started_at: iso(meta.created_at),
      ended_at: iso(meta.updated_at),
      source: { type: 'local', host: null, path: typeof md.source_path === 'string' ? md.source_path : '' },
      is_agent_session: md.sidechain === true,
      parent_session_id: typeof md.parent_session_id === 'string' ? md.parent_session_id : null,
      agent_id: typeof md.agent_id === 'string' ? md.agent_id : null,
      colloquy: restMeta,
    },
    messages: ordered.map((e) => ({
      index: index.get(e.id),
      uuid: e.id,
      parent_uuid: e.parent_id,
      role: roleOf(e),
      timestamp: iso(e.timestamp),
      content: content(e, callNames),
      metadata: metadata(e),
    })),
    graph: {
      is_linear: forks.length === 0 && (children.get(null)?.length ?? 0) <= 1,
      fork_points: forks.map(([uuid, kids]) => ({
        uuid,
        index: index.get(uuid!),
        branches: kids.map((k) => ({ uuid: k, index: index.get(k) })),
      })),
      active_path: path.map((e) => e.id),
    },
  }
}

/**
 * Sessions as unified JSON: one session → a `.json` document, several → `.ndjson` (one
 * document per line), or force either with `ndjson`.
 */
export function exportUnified(
  sessions: SessionImport | readonly SessionImport[],
  options: UnifiedExportOptions & { ndjson?: boolean } = {},
): string {
  const list = Array.isArray(sessions) ? sessions : [sessions as SessionImport]
  const ndjson = options.ndjson ?? list.length !== 1
  if (!ndjson) return `${JSON.stringify(toUnified(list[0], options), null, 2)}\n`
  return list.map((s) => `${JSON.stringify(toUnified(s, options))}\n`).join('')
}
