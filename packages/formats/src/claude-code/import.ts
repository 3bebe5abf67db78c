import type { JsonObject, SessionEntry, SessionImport } from '@colloquy/core'
import { block, resultContent, type BlockContext } from './blocks.js'
import { buildTree, type BuiltTree, type Rec } from './tree.js'
import type { ImportContext } from '../import/context.js'
import { text } from '../session/entries.js'
import { lineBatches, type Source } from '../input/source.js'
import { sessionOf } from '../session/session-of.js'
import { latestLeaf, pathTo } from '../session/tree.js'
import type { ImportedAttachment } from '../types.js'
import { ownTitle, promptTitle } from '../session/title.js'
import { arr, defined, isObj, parsed, str, toMs, type Obj } from '../values.js'
import { type Skipped, type Warnings } from '../import/warnings.js'

// Claude Code session JSONL (spec §1). One line per record; records with a `uuid` form a
// parent tree, the others are bookkeeping or session metadata. This file reads lines into
// records and splits them into sessions (the main chain, one per sub-agent run);
// tree.ts (beside this file) rebuilds each session's tree.

/** Line types without uuid that carry nothing for the transcript; counted, never silent. */
const BOOKKEEPING = new Set(['file-history-snapshot', 'queue-operation'])
/** Line types without uuid whose content is session metadata. */
const META_LINES: Record<string, string> = {
  'agent-name': 'agentName',
  'agent-setting': 'agentSetting',
  'permission-mode': 'permissionMode',
  mode: 'mode',
  'pr-link': 'prUrl',
  'bridge-session': 'bridgeSessionId',
}
export class ClaudeCodeReader {
  private readonly recs: Rec[] = []
  private readonly summaries: { summary: string; leaf: string }[] = []
  private readonly info: Obj = {}
  private readonly agentSession = new Map<string, string>()
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
    warn: (code, message) =>
      this.warnings.add(code, `line ${this.current!.n}: ${message}`, { line: this.current!.n }),
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
    /** 2.1.x `subagents/agent-<id>.meta.json` sidecars by agent id (agent type, description, worktree). */
    private readonly agentMeta: ReadonlyMap<string, Obj> = new Map(),
  ) {}

  push(line: string, n: number, file?: string): void {
    if (!line.trim()) return
    let o: unknown
    try {
      o = JSON.parse(line)
    } catch {
      this.warnings.add('bad-line', `line ${n} is not valid JSON (truncated or corrupted); skipped`, {
        line: n,
        ...(file && { file }),
      })
      return
    }
    if (!isObj(o))
      return this.warnings.add('bad-line', `line ${n} is not a JSON object; skipped`, { line: n })
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
    // 2.0.x flat agent files name their session only by `sessionId`; a folder may hold several.
    if (side && !this.agentSession.has(side) && str(o.sessionId))
      this.agentSession.set(side, str(o.sessionId)!)
    if (side === null) {
      for (const [k, f] of [
        ['cwd', 'cwd'],
        ['gitBranch', 'git_branch'],
        ['version', 'version'],
        ['slug', 'slug'],
        ['entrypoint', 'entrypoint'],
      ] as const) {
        if (typeof o[k] === 'string') this.info[f] = o[k]
      }
    }
    // Every field set up front: one object shape for all records keeps the later passes fast.
    const rec: Rec = {
      n,
      uuid,
      parent: str(o.parentUuid) ?? null,
      time: time ?? this.lastTime ?? 0,
      side,
      kind: 'other',
      blocks: [],
      results: [],
      meta: undefined,
      compactSummary: undefined,
      details: undefined,
      sourceTool: undefined,
      msgId: undefined,
      model: undefined,
      stop: undefined,
      usage: undefined,
      apiError: undefined,
      subtype: undefined,
      logicalParent: undefined,
      data: undefined,
      attachments: undefined,
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
      this.warnings.add('unknown-line', `line ${n} has type ${JSON.stringify(type)} and no uuid; skipped`, {
        line: n,
      })
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
        rec.results.push({
          call: str(b.tool_use_id) ?? '',
          content: resultContent(b.content, ctx),
          is_error: b.is_error === true,
        })
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

    const baseId =
      this.sessionId ?? str(this.info.parentSessionId) ?? `claude-${this.firstTime ?? this.now()}`
    const sessions: SessionImport[] = []
    const links: JsonObject[] = []
    const mainTree = main.length ? buildTree(main, baseId, this.warnings, this.skipped) : undefined
    for (const [key, recs] of agents) {
      const agentId = key.startsWith('sidechain-') ? undefined : key
      // An agent file of another session in the same folder (its session file absent or empty).
      const own = agentId === undefined ? baseId : (this.agentSession.get(agentId) ?? baseId)
      const foreign = mainTree !== undefined && own !== baseId
      const id = `${own}:${agentId ? `agent-${agentId}` : key}`
      // A sidechain whose first line hangs under a main-file record (compaction run as its own
      // agent file in 2.1.x): no missing parent, but a link to where in the main tree it starts.
      const tree = buildTree(
        recs,
        id,
        this.warnings,
        this.skipped,
        (uuid) => !foreign && mainTree?.tailOf(uuid) !== undefined,
      )
      const from = tree.outside.length ? mainTree?.tailOf(tree.outside[0]) : undefined
      const call = foreign ? undefined : mainTree?.taskFor(agentId, tree.prompt)
      if (!foreign) links.push(defined({ session_id: id, agent_id: agentId, tool_call_id: call?.id }))
      else
        this.warnings.add(
          'subagent-orphan',
          `sub-agent ${agentId} belongs to session ${own}, which is not in this input; imported on its own`,
          { session_id: id },
        )
      const side = agentId === undefined ? undefined : this.agentMeta.get(agentId)
      sessions.push(
        this.session(
          id,
          tree,
          defined({
            format: 'claude-code',
            source_session_id: foreign ? own : (str(this.info.parentSessionId) ?? baseId),
            sidechain: true,
            parent_session_id: mainTree && !foreign ? baseId : own,
            agent_id: agentId,
            parent_tool_call_id: call?.id,
            agent_type: str(side?.agentType),
            worktree_path: str(side?.worktreePath),
            parent_entry_id: from,
          }),
          call?.description ?? str(side?.description),
        ),
      )
    }
    if (mainTree) {
      const present = new Set(links.map((l) => l.agent_id))
      for (const [agentId, callId] of mainTree.agentResults) {
        if (present.has(agentId)) continue
        this.warnings.add(
          'subagent-missing',
          `Task call ${callId} ran sub-agent ${agentId}, whose transcript (subagents/agent-${agentId}.jsonl) is not in this input`,
          { session_id: baseId },
        )
        links.push({
          session_id: `${baseId}:agent-${agentId}`,
          agent_id: agentId,
          tool_call_id: callId,
          present: false,
        })
      }
      const { parentSessionId: _, ...info } = this.info as JsonObject
      const metadata = defined({
        format: 'claude-code',
        source_session_id: baseId,
        ...info,
        sidechains: links.length ? links : undefined,
      })
      sessions.unshift(this.session(baseId, mainTree, metadata, (entries) => this.title(main, entries)))
    }
    return sessions
  }

  /** Claude Code's own title, else this file's summary, else the first prompt on the active path. */
  private title(main: Rec[], path: SessionEntry[]): string | undefined {
    const own = ownTitle(this.customTitle) ?? ownTitle(this.aiTitle)
    if (own) return own
    const ours = new Set(main.map((r) => r.uuid))
    let summary: string | undefined
    for (const s of this.summaries) {
      if (ours.has(s.leaf)) summary = ownTitle(s.summary) ?? summary
      else this.skipped.add('summary (leaf in another file)')
    }
    return summary ?? promptTitle(path)
  }

  private session(
    id: string,
    tree: BuiltTree,
    metadata: JsonObject,
    title: string | undefined | ((path: SessionEntry[]) => string | undefined),
  ): SessionImport {
    for (const a of tree.attachments) this.attachments.push({ ...a, session_id: id })
    const leafHint = this.lastPromptLeaf === undefined ? undefined : tree.tailOf(this.lastPromptLeaf)
    const active_leaf = leafHint ?? latestLeaf(tree.entries)
    const path = pathTo(new Map(tree.entries.map((e) => [e.id, e])), active_leaf)
    return sessionOf(
      {
        session_id: id,
        title: typeof title === 'function' ? title(path) : title,
        metadata,
        entries: tree.entries,
        active_leaf,
      },
      this.now,
    )
  }
}

/** Reads Claude Code JSONL files (a session file, and optionally its sub-agent files) line by line. */
export async function readClaudeCode(
  files: readonly { source: Source; name?: string }[],
  ctx: ImportContext,
  agentMeta?: ReadonlyMap<string, Obj>,
): Promise<SessionImport[]> {
  const reader = new ClaudeCodeReader(ctx.warnings, ctx.skipped, ctx.now, agentMeta)
  for (const f of files) {
    for await (const batch of lineBatches(f.source, ctx.options)) {
      for (let i = 0; i < batch.lines.length; i++) reader.push(batch.lines[i], batch.first + i, f.name)
    }
  }
  const sessions = reader.finish()
  ctx.attachments.push(...reader.attachments)
  return sessions
}
