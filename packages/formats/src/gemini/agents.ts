import type { JsonObject, SessionImport } from '@colloquy/core'
import type { ImportContext } from '../import/context.js'
import { ownTitle } from '../session/title.js'
import { defined, isObj, str, titleFrom } from '../values.js'

// Gemini CLI sub-agent chats (2026-03+): `chats/<parent-session-id>/<agent-id>.jsonl`, metadata
// `kind: "subagent"`, `sessionId` the agent id. The parent names the run only in the tool call
// that ran it (`toolCalls[].agentId`, kept in the result's `details`). Linked both ways in
// metadata, as Claude Code's sub-agents are: the run gets `parent_session_id`,
// `parent_tool_call_id`, `agent_id`, `agent_type` and the call's task as title; the parent gets
// `sidechains` (a run the input lacks: `present: false` and a `subagent-missing` warning).

/** The sessions one file gave, and its path in a folder (the parent's id is its directory). */
export interface GeminiFile {
  sessions: SessionImport[]
  path?: string
}

interface Call {
  session: SessionImport
  call: string
  name: string
  args: JsonObject
  description: string | undefined
}

/** Sub-agent id → the call that ran it, from every session's tool results. */
function callsByAgent(sessions: readonly SessionImport[]): Map<string, Call> {
  const out = new Map<string, Call>()
  for (const session of sessions) {
    const args = new Map<string, JsonObject>()
    for (const e of session.entries) {
      if (e.kind !== 'message') continue
      const m = e.message
      if (m.role === 'assistant')
        for (const b of m.content)
          if (b.type === 'function_call' && isObj(b.arguments)) args.set(b.id, b.arguments as JsonObject)
      if (m.role !== 'function_result' || !isObj(m.details)) continue
      const agent = str(m.details.agentId)
      if (agent && !out.has(agent))
        out.set(agent, {
          session,
          call: m.function_call_id,
          name: m.function_id,
          args: args.get(m.function_call_id) ?? {},
          description: str(m.details.description),
        })
    }
  }
  return out
}

/** A run's title from its call: `<agent>: <the task it was given>`, else the call's description. */
function taskTitle(c: Call): string | undefined {
  const task = Object.values(c.args).find((v): v is string => typeof v === 'string' && v.trim() !== '')
  return ownTitle(task === undefined ? c.description : titleFrom(`${c.name}: ${task}`))
}

/** The sessions of Gemini files, sub-agent runs linked to their calls and placed after their parent. */
export function linkGeminiAgents(files: readonly GeminiFile[], ctx: ImportContext): SessionImport[] {
  const all = files.flatMap((f) => f.sessions)
  const byId = new Map(all.map((s) => [s.meta.session_id, s]))
  const calls = callsByAgent(all)
  const children = new Map<SessionImport, SessionImport[]>()
  const linked = new Set<SessionImport>()
  for (const f of files) {
    for (const s of f.sessions) {
      const md = s.meta.metadata ?? {}
      if (md.kind !== 'subagent') continue
      const id = s.meta.session_id
      const c = calls.get(id)
      // Without the call (it is in no session here), the folder the file sits in names the parent.
      const dir = f.path?.split('/').slice(-2, -1)[0]
      const parent = c?.session ?? (dir === undefined ? undefined : byId.get(dir))
      if (!parent || parent === s) {
        ctx.warnings.add(
          'subagent-orphan',
          `sub-agent chat ${id}: ${dir ? `its parent session ${dir} is` : 'no call or folder here names its parent session; it is'} not in this input; imported on its own`,
          { session_id: id },
        )
        continue
      }
      s.meta.metadata = {
        ...md,
        ...defined({
          parent_session_id: parent.meta.session_id,
          parent_tool_call_id: c?.call,
          agent_id: id,
          agent_type: c?.name,
        }),
      }
      const title = c && taskTitle(c)
      if (title) s.meta.title = title
      linked.add(s)
      const list = children.get(parent)
      if (list) list.push(s)
      else children.set(parent, [s])
    }
  }
  // Each parent lists its runs; a call whose run the input lacks is listed as missing.
  const runOf = (agent: string): SessionImport | undefined => {
    const run = byId.get(agent)
    return run && linked.has(run) ? run : undefined
  }
  for (const [agent, c] of calls) {
    if (runOf(agent)) continue
    ctx.warnings.add(
      'subagent-missing',
      `tool call ${c.call} (${c.name}) ran sub-agent ${agent}, whose chat (chats/${c.session.meta.session_id}/${agent}.jsonl) is not in this input`,
      { session_id: c.session.meta.session_id },
    )
  }
  for (const s of all) {
    const runs = [...calls].filter(([, c]) => c.session === s)
    // Runs found only by their folder: no call names them.
    const byFolder = (children.get(s) ?? []).filter((k) => !calls.has(k.meta.session_id))
    if (!runs.length && !byFolder.length) continue
    s.meta.metadata = {
      ...(s.meta.metadata ?? {}),
      sidechains: [
        ...runs.map(([agent, c]) =>
          defined({
            session_id: agent,
            agent_id: agent,
            tool_call_id: c.call,
            present: runOf(agent) ? undefined : false,
          }),
        ),
        ...byFolder.map((k) => ({ session_id: k.meta.session_id, agent_id: k.meta.session_id })),
      ],
    }
  }
  // Parents first, each followed by its runs (depth first), as Claude Code's come.
  const out: SessionImport[] = []
  const seen = new Set<SessionImport>()
  const emit = (s: SessionImport): void => {
    if (seen.has(s)) return
    seen.add(s)
    out.push(s)
    for (const k of children.get(s) ?? []) emit(k)
  }
  for (const s of all) if (!linked.has(s)) emit(s)
  // A loop of runs naming each other as parents has no root: still imported.
  for (const s of all) emit(s)
  return out
}
