import type { AssistantMessage, FunctionResultMessage, JsonObject } from '@colloquy/core'
import { describe, expect, it } from 'vitest'
import { importTranscript } from '../src/index.js'
import { summarize } from '../src/session/inspect.js'
import {
  byId,
  childrenOf,
  codes,
  fixture,
  fixtureText,
  messages,
  ofRole,
  pathIds,
  unansweredCalls,
} from './helpers.js'

// Hand-made fixtures for the Claude Code traps of spec §1 the real samples do not cover
// (fixtures/claude-fixtures.mjs writes them).

describe('Claude Code traps (hand-made fixtures)', () => {
  it('a regenerate (two assistant answers with different message.id) is a fork; the newest branch is active', async () => {
    const r = await importTranscript(fixture('claude-regenerate.jsonl'))
    const s = r.sessions[0]
    expect(childrenOf(s, 'u-1')).toEqual(['a-1', 'a-2'])
    expect(summarize(s)).toMatchObject({ entries: 5, forks: 1, branches: 2 })
    expect(pathIds(s)).toEqual(['u-1', 'a-2', 'u-2', 'a-3'])
    expect((byId(s).get('a-1') as { message: AssistantMessage }).message).toMatchObject({
      stop_reason: 'end',
      native_stop_reason: 'end_turn',
      usage: { output: 21 },
    })
    expect(r.warnings).toEqual([])
    expect(r.skipped).toEqual({ 'file-history-snapshot': 1, 'system/stop_hook_summary': 1 })
  })

  it('last-prompt.leafUuid names the active leaf over the newest one', async () => {
    const text = `${fixtureText('claude-regenerate.jsonl')}${JSON.stringify({ type: 'last-prompt', lastPrompt: 'Write a haiku about rain', leafUuid: 'a-1', sessionId: 'sess-regen' })}\n`
    const s = (await importTranscript(text)).sessions[0]
    expect(pathIds(s)).toEqual(['u-1', 'a-1'])
  })

  it('a user rewind (a second user child of an earlier node) keeps the abandoned branch with its tool error', async () => {
    const r = await importTranscript(fixture('claude-rewind.jsonl'))
    const s = r.sessions[0]
    expect(childrenOf(s, 'a-3')).toEqual(['u-2', 'u-3'])
    expect(pathIds(s)).toEqual(['u-1', 'a-1', 'r-1', 'a-3', 'u-3', 'a-6'])
    expect(pathIds(s, 'a-5')).toEqual(['u-1', 'a-1', 'r-1', 'a-3', 'u-2', 'a-4', 'r-2', 'a-5'])
    // The assistant lines a-1 (text) and a-2 (tool_use) share msg_1: one message, a-1's id.
    expect(byId(s).has('a-2')).toBe(false)
    expect((byId(s).get('a-1')! as { message: AssistantMessage }).message.content.map((b) => b.type)).toEqual(
      ['text', 'function_call'],
    )
    const err = byId(s).get('r-2')! as { message: FunctionResultMessage }
    expect(err.message).toMatchObject({
      function_call_id: 'toolu_rm',
      function_id: 'Bash',
      is_error: true,
      details: 'Error: rm: tmp/a.log: Permission denied',
    })
    expect((byId(s).get('r-1')! as { message: FunctionResultMessage }).message.details).toEqual({
      stdout: 'a.log\nb.log',
      stderr: '',
      interrupted: false,
      isImage: false,
    })
    expect(unansweredCalls(s)).toEqual([])
    expect(summarize(s)).toMatchObject({ forks: 1, branches: 2, entries: 10 })
    expect(r.warnings).toEqual([])
  })

  it('images (pasted and inside a tool result), a PDF document, signed and redacted thinking', async () => {
    const r = await importTranscript(fixture('claude-images.jsonl'))
    const s = r.sessions[0]
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
    expect(ofRole(s, 'user')[0].message.content).toEqual([
      { type: 'text', text: 'What is in this screenshot?' },
      { type: 'image', mime: 'image/png', data: png },
    ])
    const a = (byId(s).get('a-1')! as { message: AssistantMessage }).message
    expect(a.content).toEqual([
      {
        type: 'thinking',
        text: 'The user pasted a tiny image; I should also read the chart file.',
        signature: 'EqQBCkYIBxgCKkBsig1',
      },
      { type: 'thinking', text: '', signature: 'EmwKAhgBEgyRedactedPayload' },
      {
        type: 'function_call',
        id: 'toolu_read',
        function_id: 'Read',
        arguments: { file_path: '/work/demo/chart.png' },
      },
    ])
    expect((byId(s).get('r-1')! as { message: FunctionResultMessage }).message.content).toEqual([
      { type: 'image', mime: 'image/png', data: png },
    ])
    // A PDF has no inline Colloquy block: a file block, its bytes returned beside the session.
    const [file] = ofRole(s, 'user')[1].message.content
    expect(file).toMatchObject({ type: 'file', name: 'spec.pdf', mime: 'application/pdf' })
    expect(r.attachments).toHaveLength(1)
    expect(r.attachments[0]).toMatchObject({
      session_id: 'sess-images',
      attachment_id: (file as { attachment_id: string }).attachment_id,
      mime: 'application/pdf',
    })
    expect(new TextDecoder().decode(r.attachments[0].data).startsWith('%PDF-1.4')).toBe(true)
    expect((file as { size: number }).size).toBe(r.attachments[0].data.byteLength)
    expect(r.warnings).toEqual([])
  })

  it('microcompact_boundary stays in the chain; a manual compact_boundary joins its logical parent; custom-title wins', async () => {
    const r = await importTranscript(fixture('claude-microcompact.jsonl'))
    const s = r.sessions[0]
    expect(s.meta.title).toBe('Fix the sum tests')
    expect(pathIds(s)).toEqual(['u-1', 'a-1', 'r-1', 'a-2', 'r-2', 'm-1', 'a-3', 'c-1', 'u-2', 'a-4'])
    const micro = byId(s).get('m-1')!
    expect(micro).toMatchObject({
      kind: 'custom',
      custom_type: 'microcompaction',
      data: {
        source: 'claude-code',
        trigger: 'auto',
        preTokens: 120000,
        tokensSaved: 30000,
        compactedToolIds: ['toolu_t1'],
      },
    })
    // The compacted result is still there in full: microcompaction only hides it from the model.
    expect((byId(s).get('r-1')! as { message: FunctionResultMessage }).message.content).toEqual([
      { type: 'text', text: 'FAIL src/sum.test.ts\n  expected 3, got -1' },
    ])
    expect(byId(s).get('c-1')).toMatchObject({
      kind: 'custom',
      custom_type: 'compaction',
      parent_id: 'a-3',
      data: {
        trigger: 'manual',
        pre_tokens: 150000,
        summary:
          'This session is being continued from a previous conversation. Summary: the sum bug is fixed and 42 tests pass.',
        summary_uuid: 'c-2',
      },
    })
    expect(byId(s).has('c-2')).toBe(false)
    expect(s.meta.message_count).toBe(8)
    expect(r.warnings).toEqual([])
  })

  it('API errors, local commands, tool references, attachments, interruptions, metadata lines and unknown lines', async () => {
    const r = await importTranscript(fixture('claude-misc.jsonl'))
    const s = r.sessions[0]
    expect(s.meta.title).toBe('Loading notebook tools')
    expect(s.meta.metadata).toMatchObject({
      'permission-mode': 'acceptEdits',
      'agent-name': 'notebook-helper',
      version: '2.1.31',
    })
    expect(pathIds(s)).toEqual([
      'u-1',
      'e-1',
      's-1',
      'u-2',
      'a-1',
      'r-1',
      'a-2',
      't-1',
      'u-3',
      'l-1',
      'u-4',
      'a-3',
      'r-2',
      'u-5',
    ])
    expect(byId(s).get('e-1')).toMatchObject({
      kind: 'custom',
      custom_type: 'claude-code/system',
      data: { subtype: 'api_error', retryAttempt: 1, error: { status: 529 } },
    })
    // The CLI's own message about the failure: a synthetic assistant message marked as an error.
    expect((byId(s).get('s-1')! as { message: AssistantMessage }).message).toMatchObject({
      model: '<synthetic>',
      stop_reason: 'error',
      error_message: 'API Error: 529 Overloaded',
    })
    expect((byId(s).get('r-1')! as { message: FunctionResultMessage }).message.content).toEqual([
      { type: 'text', text: '[tool reference: NotebookEdit]' },
    ])
    expect(byId(s).get('t-1')).toMatchObject({
      kind: 'custom',
      custom_type: 'claude-code/attachment',
      data: { attachment: { type: 'hook_success' } },
    })
    expect(byId(s).get('l-1')).toMatchObject({
      kind: 'custom',
      data: {
        subtype: 'local_command',
        content: '<local-command-stdout>Total cost: $0.12</local-command-stdout>',
      },
    })
    expect((byId(s).get('r-2')! as { message: FunctionResultMessage }).message).toMatchObject({
      is_error: true,
      details: 'User rejected tool use',
    })
    expect(ofRole(s, 'user').at(-1)!.message.content).toEqual([
      { type: 'text', text: '[Request interrupted by user for tool use]' },
    ])
    expect(r.warnings).toEqual([
      { code: 'unknown-line', message: 'line 19 has type "hologram" and no uuid; skipped', line: 19 },
    ])
    expect(r.skipped).toEqual({ 'queue-operation': 1, 'unknown:hologram': 1 })
  })

  it('a 2.1.x sub-agent file is its own session, linked both ways through the Task call', async () => {
    const r = await importTranscript({
      'proj/sess-sub.jsonl': fixture('claude-subagent-main.jsonl'),
      'proj/sess-sub/subagents/agent-a1b2c3.jsonl': fixture('claude-subagent-agent.jsonl'),
    })
    expect(r.format).toBe('claude-code')
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual(['sess-sub', 'sess-sub:agent-a1b2c3'])
    const [main, agent] = r.sessions
    expect(main.meta.metadata!.sidechains).toEqual([
      { session_id: 'sess-sub:agent-a1b2c3', agent_id: 'a1b2c3', tool_call_id: 'toolu_task' },
    ])
    expect(agent.meta).toMatchObject({
      title: 'Find TODOs',
      metadata: {
        sidechain: true,
        parent_session_id: 'sess-sub',
        agent_id: 'a1b2c3',
        parent_tool_call_id: 'toolu_task',
      },
    })
    expect(pathIds(agent)).toEqual(['s-1', 's-2', 's-3', 's-4'])
    expect(pathIds(main)).toEqual(['u-1', 'a-1', 'r-1', 'a-2'])
    expect(
      ((byId(main).get('r-1')! as { message: FunctionResultMessage }).message.details as JsonObject)
        .totalTokens,
    ).toBe(5321)
    expect(r.warnings).toEqual([])
    expect(r.skipped).toEqual({ 'progress/agent_progress': 1 })
  })

  it('the main file alone names the missing sub-agent run in a warning', async () => {
    const r = await importTranscript(fixture('claude-subagent-main.jsonl'))
    expect(r.sessions).toHaveLength(1)
    expect(codes(r)).toEqual(['subagent-missing'])
    expect(r.sessions[0].meta.metadata!.sidechains).toEqual([
      { session_id: 'sess-sub:agent-a1b2c3', agent_id: 'a1b2c3', tool_call_id: 'toolu_task', present: false },
    ])
  })

  it('a sub-agent file alone imports as a sidechain session of its parent session id', async () => {
    const r = await importTranscript(fixture('claude-subagent-agent.jsonl'))
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual(['sess-sub:agent-a1b2c3'])
    expect(r.sessions[0].meta.metadata).toMatchObject({
      sidechain: true,
      source_session_id: 'sess-sub',
      agent_id: 'a1b2c3',
    })
    expect(messages(r.sessions[0])).toHaveLength(4)
  })
})
