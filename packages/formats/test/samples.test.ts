import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type AssistantMessage, type FunctionResultMessage, type JsonObject } from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { describe, expect, it } from 'vitest'
import { detectFormat, importTranscript, type ImportResult } from '../src/index.js'
import { summarize } from '../src/session/inspect.js'
import {
  blocksOf,
  byId,
  childrenOf,
  codes,
  messages,
  misplacedResults,
  ofRole,
  pathIds,
  SAMPLES,
  sample,
  sampleText,
  unansweredCalls,
} from './helpers.js'

// Every real file in ../shared/samples, with facts read off the files themselves (counted with
// jq-style scripts over the raw lines, then written down here).

const CC = 'claude-code/'
const load = (rel: string): Promise<ImportResult> => importTranscript(sample(rel))

describe('every sample imports into valid sessions', () => {
  const files = readdirSync(fileURLToPath(SAMPLES), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name !== 'README.md')
    .map(
      (d) =>
        `${fileURLToPath(new URL('.', `file://${d.parentPath}/`)).slice(fileURLToPath(SAMPLES).length)}${d.name}`,
    )

  // Sidecars are no transcripts; one Claude Code session file is empty.
  const sidecar = (rel: string) => rel.endsWith('.meta.json')
  const empty = (rel: string) => sample(rel).byteLength === 0
  const chatExport = (rel: string) => /^(chatgpt|claude-ai|open-webui)\//.test(rel)

  it('finds all 42 sample files', () => {
    expect(files).toHaveLength(42)
    expect(files.filter(sidecar)).toHaveLength(6)
    expect(files.filter(empty)).toEqual([
      'claude-code/claude-code-log_cc-2.0.28_flat-agent-files/7864f562-717b-4d70-a1cb-b588f7826a1a.jsonl',
    ])
    expect(files.filter(chatExport)).toHaveLength(6)
  })

  for (const rel of files) {
    if (sidecar(rel)) {
      // A sub-agent's `.meta.json` describes the agent file beside it; it is no transcript on its own.
      it(`${rel} is not taken for a transcript`, async () => {
        expect(await detectFormat(sample(rel))).toBeNull()
        await expect(importTranscript(sample(rel))).rejects.toMatchObject({ code: 'format/unknown' })
      })
      continue
    }
    if (empty(rel)) {
      // Claude Code left this session file empty (its two agent files still name it): nothing to import.
      it(`${rel} (empty) is refused with a clear error`, async () => {
        await expect(importTranscript(sample(rel))).rejects.toMatchObject({ name: 'FormatError' })
      })
      continue
    }
    it(rel, async () => {
      // The OpenCode sample is one captured part wrapped by its publisher: unwrap it first.
      const input = rel.startsWith('opencode/')
        ? JSON.stringify(JSON.parse(sampleText(rel)).part)
        : sample(rel)
      const format = await detectFormat(input)
      expect(format).toBe(rel.split('/')[0] === 'unified-agent-history' ? 'unified' : rel.split('/')[0])
      const r = await importTranscript(input)
      expect(r.sessions.length).toBeGreaterThan(0)
      for (const s of r.sessions) {
        // One root per session for the chat exports (their thread_root), whatever the source held.
        if (chatExport(rel)) expect(s.entries.filter((e) => e.parent_id === null)).toHaveLength(1)
        // What core would write: valid shapes, unique ids, every parent present, a real leaf.
        expect(() => checkImport(s)).not.toThrow()
        // A result is below its call, unless the call precedes the file (and a warning says so).
        const orphans = r.warnings.filter(
          (w) => w.code === 'orphan-result' && w.session_id === s.meta.session_id,
        )
        expect(misplacedResults(s)).toHaveLength(orphans.length)
      }
    })
  }
})

describe('Claude Code samples', () => {
  it('parallel tools and Task sub-agents: merged messages, no pseudo-forks, every result under its call', async () => {
    const r = await load(`${CC}entire_cc-2.1.7_parallel-tools-task-subagent.jsonl`)
    expect(r.sessions).toHaveLength(1)
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('70fc6d83-147d-4fdf-b015-bd67eeb11883')
    expect(s.meta.title).toBe('can you review the changes in this branch by two competing agents?')
    // 10 assistant lines are 3 API responses (3 message.ids); 4 tool_result lines.
    expect(summarize(s).by_role).toEqual({ user: 1, assistant: 3, function_result: 4 })
    // The raw tree forks at 53716847 and 5aa8bb69 (a call line with a result and the next call
    // as children). Rebuilt, it is one chain with each turn's results in call order.
    expect(summarize(s).forks).toBe(0)
    expect(pathIds(s)).toHaveLength(8)
    const [first] = ofRole(s, 'assistant')
    // The merged message takes the id of its first line.
    expect(first.id).toBe('4bf2f346-5f33-4963-8fc9-6ea9f27c7ad5')
    expect(first.message.content.map((b) => b.type)).toEqual([
      'thinking',
      'text',
      'function_call',
      'function_call',
    ])
    const calls = first.message.content
      .filter((b) => b.type === 'function_call')
      .map((b) => (b as { id: string }).id)
    expect(childrenOf(s, first.id)).toHaveLength(1)
    const r1 = byId(s).get(childrenOf(s, first.id)[0])!
    const r2 = byId(s).get(childrenOf(s, r1.id)[0])!
    expect(
      [r1, r2].map((e) =>
        e.kind === 'message' && e.message.role === 'function_result' ? e.message.function_call_id : '',
      ),
    ).toEqual(calls)
    expect(unansweredCalls(s)).toEqual([])
    // Thinking keeps its signature; usage is counted once per message (max output over the lines).
    const thinking = blocksOf(s, 'thinking')
    expect(thinking).toHaveLength(3)
    expect(thinking.every((b) => b.type === 'thinking' && (b.signature?.length ?? 0) > 100)).toBe(true)
    expect(summarize(s).usage).toMatchObject({
      input: 727,
      output: 1469,
      cache_read: 42386,
      cache_write: 88256,
    })
    expect(summarize(s).models).toEqual(['claude-opus-4-5-20251101'])
    // Task results keep the structured toolUseResult; the runs' own files are not in the sample.
    const task = ofRole(s, 'function_result').filter(
      (e) => (e.message as FunctionResultMessage).function_id === 'Task',
    )
    expect(
      task.map((e) => ((e.message as FunctionResultMessage).details as JsonObject).agentId).sort(),
    ).toEqual(['a81fed1', 'a983775'])
    expect(codes(r)).toEqual(['subagent-missing', 'subagent-missing'])
    expect(r.warnings.map((w) => w.message).join('\n')).toMatch(
      /toolu_01Hp3Cebp2EZRty3WAiW2wvj ran sub-agent a81fed1/,
    )
    expect(r.skipped).toEqual({ 'file-history-snapshot': 1 })
  })

  it('fork after /exit and resume: one real fork, the /exit chain a dead end, the newest branch active', async () => {
    const r = await load(`${CC}entire_cc-2.1.7_fork-after-exit-resume.head.jsonl`)
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('20b81bf8-77cd-4205-8ac9-727b573a70e4')
    expect(summarize(s).by_role).toEqual({ user: 6, assistant: 13, function_result: 10 })
    // turn_duration 49034f75 has two children; its own ancestors (telemetry) precede the slice,
    // so the two branches are sibling roots.
    expect(summarize(s).forks).toBe(1)
    expect(summarize(s).branches).toBe(2)
    const roots = childrenOf(s, null)
    expect(roots).toEqual(['80d37894-a47f-486c-a1f4-bcbcd1cb9b20', '3b4071cb-5793-4cf8-9939-cfabf29e51a5'])
    expect(pathIds(s, '1a10d3da-7b38-47b1-b8e7-fd10efdae0a3')).toEqual([
      '80d37894-a47f-486c-a1f4-bcbcd1cb9b20',
      'cef840c3-bd31-4ffe-83ba-ac6bcf8c23ea',
      '1a10d3da-7b38-47b1-b8e7-fd10efdae0a3',
    ])
    expect(childrenOf(s, '1a10d3da-7b38-47b1-b8e7-fd10efdae0a3')).toEqual([])
    expect(byId(s).get(roots[0])!.origin).toEqual({ is_meta: true })
    // Active: the newest leaf, the last assistant message (its Read call cut off by the slice).
    const active = pathIds(s)
    expect(active[0]).toBe('3b4071cb-5793-4cf8-9939-cfabf29e51a5')
    expect(active).toHaveLength(26)
    expect(active.at(-1)).toBe('58155134-cc26-44de-b217-a0cf31329690')
    expect(s.meta.title.startsWith('ok, works, can you now tell me why a single prompt')).toBe(true)
    expect(blocksOf(s, 'thinking')).toHaveLength(13)
    expect(unansweredCalls(s)).toEqual(['toolu_0122tJDARWgyiVyhXGrH9TWv'])
    expect(summarize(s).usage).toMatchObject({
      input: 110,
      output: 2620,
      cache_read: 1118201,
      cache_write: 228253,
    })
    // Entire's secret filter left REDACTED in a tool result; content is kept byte for byte.
    expect(JSON.stringify(s.entries)).toContain('/Users/soph/.REDACTED.json')
    expect(codes(r)).toEqual(['missing-parent', 'unpaired-call'])
    expect(r.warnings.find((w) => w.code === 'missing-parent')!.message).toMatch(
      /abea0bfd-1ddb-4207-b2cc-fc1c5b07fd3b \(through 49034f75/,
    )
    expect(r.skipped).toEqual({
      'file-history-snapshot': 4,
      'system/stop_hook_summary': 3,
      'system/turn_duration': 2,
    })
  })

  it('auto compaction: the boundary is joined to the pre-compaction leaf and keeps the summary', async () => {
    const r = await load(`${CC}entire_cc-2.1.14_auto-compaction.head.jsonl`)
    const s = r.sessions[0]
    expect(summarize(s).by_role).toEqual({ function_result: 13, assistant: 13, 'custom:compaction': 1 })
    const c = byId(s).get('b84575d5-e99f-4c02-835b-36a660a18e94')!
    expect(c.kind).toBe('custom')
    // parentUuid null, logicalParentUuid 6b766e28 (the Bash result on line 5).
    expect(c.parent_id).toBe('6b766e28-40fe-46a7-b260-1a356ca91af5')
    const data = (c.kind === 'custom' ? c.data : null) as JsonObject
    expect(data).toMatchObject({
      source: 'claude-code',
      trigger: 'auto',
      pre_tokens: 156286,
      logical_parent_uuid: '6b766e28-40fe-46a7-b260-1a356ca91af5',
      summary_uuid: 'e5a65832-c9d2-4e84-b94f-c876dae87801',
    })
    expect(String(data.summary)).toMatch(
      /^This session is being continued from a previous conversation that ran out of context/,
    )
    // The summary line is not also a user message, and the next answer hangs off the boundary.
    expect(ofRole(s, 'user')).toHaveLength(0)
    expect(childrenOf(s, c.id)).toEqual(['75fe25c4-e9de-4e6f-b5a6-972345643595'])
    expect(summarize(s).forks).toBe(0)
    expect(pathIds(s)).toHaveLength(27)
    // Edges of a slice: a result whose call precedes the file, a call whose result follows it.
    const orphan = byId(s).get('fc73ea0c-a733-47e1-bd9e-ec728cd50903')!
    expect(orphan.parent_id).toBeNull()
    expect(
      orphan.kind === 'message' && orphan.message.role === 'function_result' && orphan.message.function_id,
    ).toBe('unknown')
    expect(misplacedResults(s)).toEqual(['fc73ea0c-a733-47e1-bd9e-ec728cd50903'])
    expect(unansweredCalls(s)).toEqual(['toolu_01T5Y1dUJc7eqQWgwJsmGTAi'])
    expect(codes(r)).toEqual(['missing-parent', 'orphan-result', 'unpaired-call'])
    expect(r.skipped).toEqual({ 'file-history-snapshot': 2, 'progress/hook_progress': 5 })
  })

  it('summary lines and resume: foreign summaries are not the title, progress and telemetry leave no forks', async () => {
    const r = await load(`${CC}entire_cc-2.1.12_summary-lines-resume.jsonl`)
    const s = r.sessions[0]
    expect(summarize(s).by_role).toEqual({ user: 3, assistant: 10, function_result: 7 })
    // Raw forks at cdef98b0, efa68b73 and c2a32d2e are all progress or hook telemetry.
    expect(summarize(s).forks).toBe(0)
    expect(pathIds(s)).toHaveLength(20)
    expect(s.meta.title.startsWith('brews is being phased out in favor of homebrew_casks')).toBe(true)
    expect(blocksOf(s, 'thinking')).toHaveLength(10)
    const mcp = blocksOf(s, 'function_call').find(
      (b) => b.type === 'function_call' && b.function_id === 'mcp__ide__getDiagnostics',
    )
    expect(mcp).toBeDefined()
    expect(unansweredCalls(s)).toEqual([])
    expect(summarize(s).usage).toMatchObject({
      input: 88,
      output: 22,
      cache_read: 425666,
      cache_write: 70925,
    })
    expect(codes(r)).toEqual(['missing-parent'])
    expect(r.skipped).toEqual({
      'file-history-snapshot': 3,
      'system/stop_hook_summary': 3,
      'system/turn_duration': 2,
      'progress/hook_progress': 7,
      'progress/mcp_progress': 2,
      'summary (leaf in another file)': 16,
    })
  })

  it('inline sidechains (1.0.108): the two sub-agent runs become their own sessions, linked to their Task calls', async () => {
    const r = await load(`${CC}claude-code-viewer_cc-1.0.108_inline-sidechains.jsonl`)
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual([
      '5c0375b4-57a5-4f26-b12d-d022ee4e51b7',
      '5c0375b4-57a5-4f26-b12d-d022ee4e51b7:sidechain-6340ddef-f656-4b72-a065-82390f637678',
      '5c0375b4-57a5-4f26-b12d-d022ee4e51b7:sidechain-83e2917c-8940-4df6-a5a5-f2514f0d08c5',
    ])
    const [main, a, b] = r.sessions
    expect(summarize(main).by_role).toEqual({ user: 2, assistant: 10, function_result: 13 })
    expect(summarize(a).entries).toBe(6)
    expect(summarize(b).entries).toBe(14)
    expect(main.meta.title).toBe('/orchestrator @CLAUDE.md を最新の状態にアップデートしてください')
    expect(a.meta.title).toBe('Check package configuration')
    expect(a.meta.metadata).toMatchObject({
      sidechain: true,
      parent_session_id: main.meta.session_id,
      parent_tool_call_id: 'toolu_014YF9TXhDRR7BnpasNJ7gjC',
    })
    expect(b.meta.metadata).toMatchObject({
      sidechain: true,
      parent_tool_call_id: 'toolu_01LKfUwrsnof18CpWZQcJH44',
    })
    expect((main.meta.metadata!.sidechains as JsonObject[]).map((l) => l.tool_call_id)).toEqual([
      'toolu_014YF9TXhDRR7BnpasNJ7gjC',
      'toolu_01LKfUwrsnof18CpWZQcJH44',
    ])
    // The isMeta line of the slash command is marked; string content became a text block.
    expect(messages(main).filter((e) => e.origin?.is_meta)).toHaveLength(1)
    expect(ofRole(main, 'user')[0].message.content[0].type).toBe('text')
    // Tool errors keep is_error (2 in the main chain, 1 in the second run).
    expect(
      ofRole(main, 'function_result')
        .filter((e) => (e.message as FunctionResultMessage).is_error)
        .map((e) => (e.message as FunctionResultMessage).function_call_id),
    ).toEqual(['toolu_018t5jce2ZNoGr2ADsHGQife', 'toolu_019ctBEHhLKehUi4xPDkYwvc'])
    expect(
      ofRole(b, 'function_result').filter((e) => (e.message as FunctionResultMessage).is_error),
    ).toHaveLength(1)
    for (const s of r.sessions) {
      expect(summarize(s).forks).toBe(0)
      expect(unansweredCalls(s)).toEqual([])
      expect(summarize(s).models).toEqual(['claude-sonnet-4-20250514'])
    }
    expect(summarize(main).usage).toMatchObject({
      input: 64,
      output: 2003,
      cache_read: 190261,
      cache_write: 26074,
    })
    expect(r.warnings).toEqual([])
  })
})

describe('Codex samples', () => {
  it('0.58.0 rollout: calls and outputs paired by call_id, JSON strings decoded, UI copies skipped', async () => {
    const r = await load('codex/acidicsoil_rollout-0.58.0_gpt-5.1-codex.head.jsonl')
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('019a93b9-f380-7600-98ff-940e6b99603c')
    // session_meta.timestamp is UTC although the file name says 15-30-28 local time.
    expect(new Date(s.meta.created_at).toISOString()).toBe('2025-11-17T21:30:28.608Z')
    expect(summarize(s).by_role).toEqual({
      'custom:codex/context': 1,
      user: 1,
      assistant: 27,
      function_result: 27,
    })
    expect(unansweredCalls(s)).toEqual([])
    const [call] = blocksOf(s, 'function_call')
    expect(call).toMatchObject({
      function_id: 'shell',
      arguments: { command: ['bash', '-lc', 'ls'], workdir: '/home/user/projects/temp/chatbot-ui' },
    })
    const out = ofRole(s, 'function_result')[0].message as FunctionResultMessage
    expect(out.content[0]).toMatchObject({ type: 'text' })
    expect(
      (out.content[0] as { text: string }).text.startsWith('LM Studio configuration.md\nREADME.md'),
    ).toBe(true)
    expect(out.details).toMatchObject({ exit_code: 0 })
    const thinking = blocksOf(s, 'thinking')
    expect(thinking).toHaveLength(27)
    expect(thinking[0]).toMatchObject({ text: '**Planning repository inspection**' })
    expect((thinking[0] as { signature: string }).signature.startsWith('gAAAAA')).toBe(true)
    expect(s.meta.metadata).toMatchObject({
      format: 'codex',
      originator: 'codex_cli_rs',
      cli_version: '0.58.0',
      model: 'gpt-5.1-codex',
      git: { branch: 'main' },
      total_token_usage: { total_tokens: 663165 },
    })
    // Per-call usage from token_count; the last count comes after the file's last item.
    expect(summarize(s).usage).toMatchObject({ input: 657488 - 33492, output: 5677 - 46, cache_read: 558976 })
    expect(r.warnings).toEqual([])
    expect(r.skipped).toEqual({
      'event_msg/user_message (copy of a response item)': 1,
      turn_context: 28,
      'response_item/ghost_snapshot': 1,
      'event_msg/token_count': 56,
      'event_msg/agent_reasoning (copy of a response item)': 27,
    })
  })

  it('0.61.1 VS Code rollout: prompt, reasoning and reply only in the event stream', async () => {
    const r = await load('codex/lparlett_codex-vscode-0.61.1_sanitized.jsonl')
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('00000000-0000-0000-0000-000000000001')
    expect(messages(s).map((e) => [e.message.role, e.message.content.map((b) => b.type).join('+')])).toEqual([
      ['user', 'text'],
      ['assistant', 'thinking+function_call'],
      ['function_result', 'text'],
      ['assistant', 'text'],
    ])
    expect(s.meta.metadata).toMatchObject({
      originator: 'codex_vscode',
      source: 'vscode',
      cwd: 'C:\\workspace\\project',
      model: 'gpt-5.1-codex-max',
    })
    expect((ofRole(s, 'assistant')[0].message as AssistantMessage).usage).toEqual({
      input: 1200,
      output: 50,
      cache_read: 0,
      reasoning: 0,
    })
    expect(unansweredCalls(s)).toEqual([])
    expect(r.warnings).toEqual([])
  })
})

describe('Gemini CLI samples', () => {
  it('JSON-era ConversationRecord: embedded results split into call + result, thoughts as thinking', async () => {
    const r = await load('gemini/entire_gemini-cli-0.23_session.json')
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('f7633853-6663-4dbb-bbf4-6159afa29df8')
    expect(summarize(s).by_role).toEqual({ user: 1, assistant: 11, function_result: 9, custom: 1 })
    expect(blocksOf(s, 'thinking')).toHaveLength(15)
    expect(
      blocksOf(s, 'function_call')
        .map((b) => (b as { function_id: string }).function_id)
        .sort(),
    ).toEqual([
      'read_file',
      'read_file',
      'run_shell_command',
      'run_shell_command',
      'run_shell_command',
      'run_shell_command',
      'run_shell_command',
      'run_shell_command',
      'write_file',
    ])
    expect(unansweredCalls(s)).toEqual([])
    // The turn with content "" and only a tool call has no empty text block.
    const rm = byId(s).get('5b9afa41-4e4f-429c-82f6-20b8e1459d54')!
    expect(rm.kind === 'message' && rm.message.content.map((b) => b.type)).toEqual(['function_call'])
    expect(summarize(s).usage).toMatchObject({
      input: 131375,
      output: 717,
      cache_read: 113854,
      reasoning: 1095,
    })
    expect(summarize(s).models).toEqual(['gemini-2.5-flash'])
    const info = messages(s).find((e) => e.message.role === 'custom')!
    expect(info.message).toMatchObject({ custom_type: 'gemini/info' })
    expect(pathIds(s)).toHaveLength(22)
    expect(r.warnings).toEqual([])
  })

  it('a session holding only a warning is one visible notice', async () => {
    const r = await load('gemini/entire_gemini-cli_warning-only-session.json')
    const s = r.sessions[0]
    expect(s.entries).toHaveLength(1)
    expect(s.meta.message_count).toBe(1)
    const e = messages(s)[0]
    expect(e.message).toMatchObject({ role: 'custom', custom_type: 'gemini/warning' })
    expect(
      (e.message.content[0] as { text: string }).text.startsWith(
        'Hook(s) [entire-session-end-exit] failed for event SessionEnd',
      ),
    ).toBe(true)
    expect(r.warnings).toEqual([])
  })

  it('JSONL era: metadata line, $set merged, Part[] content', async () => {
    const r = await load('gemini/agent-sessions_gemini-jsonl-era_anonymized.jsonl')
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('gemini_stage0_jsonl')
    expect(s.meta.metadata).toMatchObject({ kind: 'main' })
    expect(messages(s).map((e) => e.message.role)).toEqual([
      'user',
      'assistant',
      'function_result',
      'assistant',
    ])
    expect(ofRole(s, 'user')[0].message.content).toEqual([
      { type: 'text', text: 'Say hello and list files.' },
    ])
    expect((ofRole(s, 'function_result')[0].message.content[0] as { text: string }).text).toBe(
      'Output: AgentSessions/\nREADME.md\nProcess Group PGID: 12345',
    )
    expect(summarize(s).models).toEqual(['gemini-3-flash-preview'])
    expect(new Date(s.meta.updated_at).toISOString()).toBe('2026-04-29T21:39:45.996Z')
    expect(r.warnings).toEqual([])
  })
})

describe('OpenCode, unified and OPA samples', () => {
  it('OpenCode part with ignored:true, missing its message and session records', async () => {
    const part = JSON.parse(sampleText('opencode/opencode-session-recall_sdk-ignored-part.json')).part
    const r = await importTranscript(JSON.stringify(part))
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('ses_238a035a5ffepR3aPqGSbKXRkk')
    expect(s.entries).toHaveLength(1)
    const e = messages(s)[0]
    expect(e.id).toBe('msg_f078d44d900199cC8oYcHajGuF')
    expect(e.message.content).toEqual([
      { type: 'text', text: '<redacted: opencode-multikey status table rendered into a user message>' },
    ])
    expect(e.origin).toEqual({ ignored_parts: ['prt_f078d44d9002rnOhQRNzIfg8og'] })
    expect(codes(r)).toEqual(['message-missing', 'session-missing'])
  })

  it('unified 1.0 spec example: tree, active path and Claude-style tool result', async () => {
    const r = await load('unified-agent-history/agent-history_unified-schema-1.0_doc-example.json')
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('c7e6fbcb-6a8a-4637-ab33-6075d83060a8')
    expect(pathIds(s)).toEqual(['msg-001', 'msg-002', 'msg-003'])
    expect(ofRole(s, 'assistant')[0].message).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      provider: 'anthropic',
      stop_reason: 'function_call',
      native_stop_reason: 'tool_use',
      usage: { input: 150, output: 45 },
    })
    expect(ofRole(s, 'function_result')[0].message).toMatchObject({
      function_call_id: 'tool_001',
      function_id: 'Bash',
      is_error: false,
    })
    expect(s.meta.metadata).toMatchObject({ format: 'claude-code', cwd: '/home/user/myproject' })
    expect(r.warnings).toEqual([])
  })

  it('OPA session history spec example: string content, sequential ids', async () => {
    const r = await load('opa/opa-spec_session-history-0.1_spec-example.json')
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('f47ac10b-58cc-4372-a567-0e02b2c3d479')
    expect(pathIds(s)).toEqual(['1', '2'])
    expect(messages(s).map((e) => e.message.role)).toEqual(['user', 'assistant'])
    expect(ofRole(s, 'user')[0].message.content).toEqual([
      { type: 'text', text: 'Can you start by reviewing the north region data?' },
    ])
    expect(new Date(s.meta.created_at).toISOString()).toBe('2026-03-01T10:00:00.000Z')
    expect(new Date(s.meta.updated_at).toISOString()).toBe('2026-03-03T17:45:00.000Z')
    expect(r.warnings).toEqual([])
  })
})
