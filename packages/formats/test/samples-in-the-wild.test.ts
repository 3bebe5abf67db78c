import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import {
  type AssistantMessage,
  type FunctionResultMessage,
  type JsonObject,
  type SessionImport,
} from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { describe, expect, it } from 'vitest'
import { importTranscript } from '../src/index.js'
import { summarize } from '../src/session/inspect.js'
import {
  byId,
  childrenOf,
  codes,
  messages,
  ofRole,
  pathIds,
  SAMPLES,
  sample,
  unansweredCalls,
} from './helpers.js'

// The newer real files in ../shared/samples (Claude Code 1.0.128 – 2.1.114, Codex Desktop 0.104):
// facts counted off the files with python over the parsed lines, then written down here.

const CC = 'claude-code/'
/** A sample folder as the relative-path map a user's folder pick gives. */
function folder(rel: string): Record<string, Uint8Array> {
  const root = fileURLToPath(new URL(rel, SAMPLES))
  const out: Record<string, Uint8Array> = {}
  for (const p of readdirSync(root, { recursive: true }) as string[]) {
    if (/\.(jsonl|json)$/.test(p)) out[p] = new Uint8Array(readFileSync(`${root}/${p}`))
  }
  return out
}
const valid = (r: { sessions: SessionImport[] }): void => {
  for (const s of r.sessions) expect(() => checkImport(s)).not.toThrow()
}
const forks = (s: SessionImport): number => {
  const kids = new Map<string | null, number>()
  for (const e of s.entries) kids.set(e.parent_id, (kids.get(e.parent_id) ?? 0) + 1)
  return [...kids].filter(([k, n]) => k !== null && n > 1).length
}

describe('Claude Code in the wild', () => {
  it('2.1.114 with a subagents/ folder: attachments on the path, parallel pseudo-forks merged, 6 agents linked with their .meta.json', async () => {
    const r = await importTranscript(folder(`${CC}claude-code-log_cc-2.1.114_subagents-dir/`))
    valid(r)
    const main = r.sessions[0]
    expect(main.meta.session_id).toBe('ef958aa1-0e93-49f0-bb71-150f63befcd1')
    // 17 API responses, 40 tool results, 5 prompts; 49 attachment lines and 2 away_summary kept as custom entries.
    expect(summarize(main).by_role).toEqual({
      'custom:claude-code/attachment': 49,
      user: 5,
      assistant: 17,
      function_result: 40,
      'custom:claude-code/system': 2,
    })
    // The raw file's 6 multi-child nodes are all parallel-tool pseudo-forks, and the hook
    // attachments between a result and the next line of the same response are no forks either.
    expect(forks(main)).toBe(0)
    // The only root is line 2, an attachment.
    expect(childrenOf(main, null)).toHaveLength(1)
    expect(byId(main).get(childrenOf(main, null)[0])).toMatchObject({
      kind: 'custom',
      custom_type: 'claude-code/attachment',
      data: { attachment: { type: 'hook_success' } },
    })
    expect(unansweredCalls(main)).toEqual([])
    // The last of its 8 permission-mode lines.
    expect(main.meta.metadata).toMatchObject({ version: '2.1.114', 'permission-mode': 'acceptEdits' })
    const links = main.meta.metadata!.sidechains as JsonObject[]
    expect(links.map((l) => [l.agent_id, l.tool_call_id]).sort()).toEqual([
      ['a36efb2a1231c41e2', 'toolu_017y4gSjMWeQ3L2DAKiygU2y'],
      ['a4ca7529859c158c2', 'toolu_01GmrK6tgdD9D5xD6W5X9UUy'],
      ['a52886dc180afb356', 'toolu_016neBD9WjCCZqzRTP3afGDT'],
      ['a6aa8ad077d9ea083', 'toolu_0151DrVyXBXfb63SXGNF1qDb'],
      ['ab1e6e141221a29ab', 'toolu_01EaAN7bPNQrMTGoKhbEjVrx'],
      ['aef063ba534d73153', 'toolu_01N26s4U6vDxE1NRAH5CyCNf'],
    ])
    expect(r.sessions).toHaveLength(7)
    for (const s of r.sessions.slice(1)) {
      expect(s.meta.metadata).toMatchObject({
        sidechain: true,
        parent_session_id: main.meta.session_id,
        agent_type: 'general-purpose',
      })
      expect(forks(s)).toBe(0)
    }
    // The 3 worktree agents' sidecars name their worktree; the title is the Agent call's description.
    const plan = r.sessions.find((s) => s.meta.metadata!.agent_id === 'a4ca7529859c158c2')!
    expect(plan.meta.metadata).toMatchObject({
      worktree_path: '-experiments/worktrees/.claude/worktrees/agent-a4ca7529',
    })
    expect(plan.meta.title).toBe('Research Claude Code plan mode')
    expect(r.sessions.filter((s) => s.meta.metadata!.worktree_path !== undefined)).toHaveLength(3)
    expect(codes(r)).toEqual([])
  })

  it("2.0.28 flat agent files: linked only by sessionId; the empty session's agents stay their own", async () => {
    const r = await importTranscript(folder(`${CC}claude-code-log_cc-2.0.28_flat-agent-files/`))
    valid(r)
    const main = r.sessions[0]
    expect(main.meta.session_id).toBe('5ed31c36-bca8-40fd-8d24-f1a1f0af7901')
    // 12 lines: 1 prompt and 4 tool results (5 user), 7 assistant lines = 3 responses.
    expect(summarize(main).by_role).toEqual({ user: 1, assistant: 3, function_result: 4 })
    expect(forks(main)).toBe(0)
    expect(unansweredCalls(main)).toEqual([])
    expect((main.meta.metadata!.sidechains as JsonObject[]).map((l) => l.agent_id).sort()).toEqual([
      'c3d572ee',
      'c63fe96c',
    ])
    const agents = r.sessions.slice(1)
    expect(agents.map((s) => s.meta.session_id).sort()).toEqual([
      '5ed31c36-bca8-40fd-8d24-f1a1f0af7901:agent-c3d572ee',
      '5ed31c36-bca8-40fd-8d24-f1a1f0af7901:agent-c63fe96c',
      '7864f562-717b-4d70-a1cb-b588f7826a1a:agent-3ea04571',
      '7864f562-717b-4d70-a1cb-b588f7826a1a:agent-b1f5d80e',
    ])
    for (const s of agents) {
      // Each agent file: the `Warmup` prompt and one answer.
      expect(messages(s).map((e) => e.message.role)).toEqual(['user', 'assistant'])
      expect(s.meta.title).toBe('Warmup')
    }
    // The empty session file is said to be empty, not read as nothing.
    expect(codes(r)).toEqual(['empty-file', 'subagent-orphan', 'subagent-orphan'])
    expect(r.warnings.find((w) => w.code === 'empty-file')).toMatchObject({
      file: '7864f562-717b-4d70-a1cb-b588f7826a1a.jsonl',
    })
  })

  it('2.1.42 rewind: one real fork at the stop_hook_summary, branch B active to its last line', async () => {
    const r = await importTranscript(sample(`${CC}claude-code-log_cc-2.1.42_rewind-edit-fork.jsonl`))
    valid(r)
    const s = r.sessions[0]
    expect(forks(s)).toBe(1)
    expect(summarize(s).branches).toBe(2)
    // The two prompts after the rewind are siblings (the summary line itself is telemetry).
    const a = byId(s).get('5270777a-1975-4e8a-9cad-b36280ae0ec5')!
    const b = byId(s).get('9edc38e6-0ac0-42c0-b911-e24611af2a5b')!
    expect(a.parent_id).toBe(b.parent_id)
    expect(s.active_leaf).toBe('d107d4c0-ae71-4d3d-af3a-cf7a370bd21f')
    expect(pathIds(s)).toContain('9edc38e6-0ac0-42c0-b911-e24611af2a5b')
    expect(r.skipped).toEqual({
      'file-history-snapshot': 9,
      'progress/hook_progress': 11,
      'system/stop_hook_summary': 7,
    })
  })

  it('1.0.128 pasted image: the PNG is an image block of the prompt, the chain linear', async () => {
    const r = await importTranscript(sample(`${CC}claude-code-log_cc-1.0.128_pasted-image.jsonl`))
    valid(r)
    const s = r.sessions[0]
    expect(forks(s)).toBe(0)
    const prompt = byId(s).get('ddfcb7df-9278-429e-8360-837444af6358')!
    expect(prompt.kind === 'message' && prompt.message.content.map((b) => b.type)).toEqual(['image', 'text'])
    const img = prompt.kind === 'message' ? prompt.message.content[0] : undefined
    expect(img).toMatchObject({ type: 'image', mime: 'image/png' })
    expect(img?.type === 'image' && img.data.length).toBe(527640)
    expect(messages(s).filter((e) => e.origin?.is_meta)).toHaveLength(2)
  })
})

describe('Codex Desktop 0.104', () => {
  it('developer messages as context, phase on every reply, exec_command/write_stdin paired, a web search with no action', async () => {
    const r = await importTranscript(sample('codex/localpush_codex-desktop-0.104_sanitized.jsonl'))
    valid(r)
    const s = r.sessions[0]
    expect(s.meta.metadata).toMatchObject({
      originator: 'Codex Desktop',
      source: 'vscode',
      cli_version: '0.104.0-alpha.1',
    })
    // 10 developer messages; 10 user messages (the 5 user_message events are their copies, even
    // though the publisher's sanitizer wrote different placeholders into them).
    const context = s.entries.filter((e) => e.kind === 'custom' && e.custom_type === 'codex/context')
    expect(context.map((e) => (e.kind === 'custom' ? (e.data as JsonObject).role : ''))).toEqual(
      Array(10).fill('developer'),
    )
    expect(ofRole(s, 'user')).toHaveLength(10)
    expect(r.skipped['event_msg/user_message (copy of a response item)']).toBe(5)
    // 43 assistant messages, each with its phase (38 commentary, 5 final_answer).
    const phases = ofRole(s, 'assistant')
      .map((e) => e.origin?.phase)
      .filter((p) => p !== undefined)
    expect(phases.filter((p) => p === 'commentary')).toHaveLength(38)
    expect(phases.filter((p) => p === 'final_answer')).toHaveLength(5)
    const calls = messages(s)
      .flatMap((e) => e.message.content)
      .filter((b) => b.type === 'function_call')
      .map((b) => (b.type === 'function_call' ? b.function_id : ''))
    expect(calls.filter((c) => c === 'exec_command')).toHaveLength(71)
    expect(calls.filter((c) => c === 'write_stdin')).toHaveLength(9)
    expect(calls.filter((c) => c === 'apply_patch')).toHaveLength(22)
    // All 104 call_ids answered, plus the web search (a call and an empty result of its own).
    expect(unansweredCalls(s)).toEqual([])
    const search = ofRole(s, 'function_result').filter(
      (e) => (e.message as FunctionResultMessage).function_id === 'web_search',
    )
    expect(search).toHaveLength(1)
    expect(ofRole(s, 'function_result')).toHaveLength(105)
    expect(forks(s)).toBe(0)
    expect(r.warnings).toEqual([])
    expect((ofRole(s, 'assistant')[0].message as AssistantMessage).model).toBe('gpt-5.3-codex')
  })

  it('an abandoned session: its only exec_command has no output, said so; no task_complete', async () => {
    const r = await importTranscript(
      sample('codex/localpush_codex-desktop-0.104_unanswered-call_sanitized.jsonl'),
    )
    valid(r)
    const s = r.sessions[0]
    expect(ofRole(s, 'user')).toHaveLength(4)
    expect(s.entries.filter((e) => e.kind === 'custom' && e.custom_type === 'codex/context')).toHaveLength(4)
    expect(unansweredCalls(s)).toEqual(['call_UtYwHmwWekzvq83m8Rb9K8jJ'])
    expect(codes(r)).toEqual(['unpaired-call'])
    expect(ofRole(s, 'assistant').map((e) => e.origin?.phase)).toEqual(['commentary'])
  })
})

// No public file shows these; the lines follow the format study (spec §1) and the 2.1.x files
// above (same envelope), written by hand.
describe('Claude Code variants built from the format documentation', () => {
  const env = {
    isSidechain: false,
    userType: 'external',
    cwd: '/w',
    sessionId: 'main-1',
    version: '2.1.50',
    entrypoint: 'sdk-ts',
  }
  const at = (i: number): string => new Date(Date.UTC(2026, 2, 1, 0, 0, i)).toISOString()
  const mainLines = [
    {
      ...env,
      type: 'progress',
      uuid: 'p0',
      parentUuid: null,
      timestamp: at(0),
      data: { type: 'hook_progress', hookEvent: 'SessionStart' },
    },
    // Written before its parent, and through Bedrock: no requestId anywhere.
    {
      ...env,
      type: 'assistant',
      uuid: 'a1',
      parentUuid: 'u1',
      timestamp: at(2),
      message: {
        id: 'msg_bdrk_1',
        role: 'assistant',
        model: 'claude-x',
        content: [{ type: 'text', text: 'hello' }],
      },
    },
    {
      ...env,
      type: 'user',
      uuid: 'u1',
      parentUuid: 'p0',
      timestamp: at(1),
      message: { role: 'user', content: 'hi' },
    },
    { type: 'ai-title', aiTitle: 'Greeting the model', sessionId: 'main-1' },
    { type: 'last-prompt', lastPrompt: 'hi', leafUuid: 'a1', sessionId: 'main-1' },
  ]
  // 2.1.x runs a compaction as its own agent file; its first line's parent is in the main file.
  const compact = [
    {
      ...env,
      isSidechain: true,
      agentId: 'acompact-5f1e2d',
      type: 'user',
      uuid: 'c1',
      parentUuid: 'a1',
      timestamp: at(3),
      message: {
        role: 'user',
        content: 'Your task is to create a detailed summary of the conversation so far',
      },
    },
    {
      ...env,
      isSidechain: true,
      agentId: 'acompact-5f1e2d',
      type: 'assistant',
      uuid: 'c2',
      parentUuid: 'c1',
      timestamp: at(4),
      message: {
        id: 'msg_bdrk_2',
        role: 'assistant',
        model: 'claude-x',
        content: [{ type: 'text', text: '<summary>the user said hi</summary>' }],
      },
    },
  ]
  const jsonl = (lines: object[]): string => lines.map((l) => JSON.stringify(l)).join('\n')

  it('a progress root, a child before its parent, ai-title, last-prompt, an SDK entrypoint, and a compaction sidechain file starting in the main file', async () => {
    const r = await importTranscript({
      'main-1.jsonl': jsonl(mainLines),
      'main-1/subagents/agent-acompact-5f1e2d.jsonl': jsonl(compact),
    })
    valid(r)
    const [main, run] = r.sessions
    expect(pathIds(main)).toEqual(['u1', 'a1'])
    expect(main.meta.title).toBe('Greeting the model')
    expect(main.meta.metadata).toMatchObject({ entrypoint: 'sdk-ts', version: '2.1.50' })
    expect(main.active_leaf).toBe('a1')
    expect(run.meta.session_id).toBe('main-1:agent-acompact-5f1e2d')
    expect(run.meta.metadata).toMatchObject({
      sidechain: true,
      parent_session_id: 'main-1',
      agent_id: 'acompact-5f1e2d',
      parent_entry_id: 'a1',
    })
    expect(pathIds(run)).toEqual(['c1', 'c2'])
    // Its first parent is in the main file: a link, not a missing parent.
    expect(codes(r)).toEqual([])
    expect(r.skipped).toEqual({ 'progress/hook_progress': 1 })
  })
})
