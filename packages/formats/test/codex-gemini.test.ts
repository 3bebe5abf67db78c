import type { AssistantMessage, FunctionResultMessage, JsonObject } from '@colloquy/core'
import { describe, expect, it } from 'vitest'
import { detectFormat, importTranscript } from '../src/index.js'
import { summarize } from '../src/session/inspect.js'
import {
  blocksOf,
  byId,
  childrenOf,
  codes,
  fixture,
  messages,
  ofRole,
  pathIds,
  unansweredCalls,
} from './helpers.js'

// Hand-made fixtures for the Codex and Gemini CLI traps of spec §2-3 that the samples lack.

describe('Codex (hand-made fixtures)', () => {
  it('the mid-2025 shape: bare header, bare response items, state filler lines', async () => {
    expect(await detectFormat(fixture('codex-legacy.jsonl'))).toBe('codex')
    const r = await importTranscript(fixture('codex-legacy.jsonl'))
    const s = r.sessions[0]
    expect(s.meta.session_id).toBe('5f0c3a52-2c1e-4a7e-9d3f-0b1c2d3e4f50')
    expect(new Date(s.meta.created_at).toISOString()).toBe('2025-06-10T14:02:11.123Z')
    expect(s.meta.metadata).toMatchObject({
      format: 'codex',
      instructions: 'Prefer small commits.',
      git: { branch: 'main' },
    })
    expect(s.entries.map((e) => (e.kind === 'custom' ? e.custom_type : e.message.role))).toEqual([
      'codex/context',
      'codex/context',
      'user',
      'assistant',
      'function_result',
      'assistant',
    ])
    expect(s.meta.title).toBe('How many Python files are there?')
    const call = (ofRole(s, 'assistant')[0].message as AssistantMessage).content
    expect(call).toEqual([
      {
        type: 'thinking',
        text: '**Counting Python files**',
        signature: 'gAAAAABoSIGlegacyEncryptedReasoning',
      },
      {
        type: 'function_call',
        id: 'call_legacy_1',
        function_id: 'shell',
        arguments: { command: ['bash', '-lc', "find . -name '*.py' | wc -l"], workdir: '/home/dev/demo' },
      },
    ])
    expect(ofRole(s, 'function_result')[0].message).toMatchObject({
      function_call_id: 'call_legacy_1',
      content: [{ type: 'text', text: '17\n' }],
      details: { exit_code: 0, duration_seconds: 0.2 },
      is_error: false,
    })
    expect(r.skipped).toEqual({ 'record_type:state': 3 })
    expect(r.warnings).toEqual([])
  })

  it('the current shape: replies, patches, failed commands, web search, compaction, interruption', async () => {
    const r = await importTranscript(fixture('codex-current.jsonl'))
    const s = r.sessions[0]
    expect(s.meta.title).toBe('Fix the sum test')
    expect(s.entries.map((e) => (e.kind === 'custom' ? e.custom_type : e.message.role))).toEqual([
      'codex/context',
      'user',
      'assistant',
      'function_result',
      'assistant',
      'function_result',
      'assistant',
      'function_result',
      'assistant',
      'compaction',
      'user',
      'assistant',
      'codex/turn_aborted',
    ])
    // The prompt and its image come once (the user_message event is the UI copy).
    expect(ofRole(s, 'user')[0].message.content.map((b) => b.type)).toEqual(['text', 'image'])
    expect(ofRole(s, 'user')[1].message.content).toEqual([{ type: 'text', text: 'Now handle negatives too' }])
    const patch = blocksOf(s, 'function_call').find(
      (b) => b.type === 'function_call' && b.function_id === 'apply_patch',
    )!
    expect((patch as { arguments: unknown }).arguments).toMatch(/^\*\*\* Begin Patch/)
    const results = ofRole(s, 'function_result').map((e) => e.message as FunctionResultMessage)
    expect(results.map((m) => [m.function_id, m.is_error])).toEqual([
      ['apply_patch', false],
      ['shell_command', true],
      ['web_search', false],
    ])
    expect(results[1].details).toEqual({ exit_code: 1, duration_seconds: 1.5 })
    const reply = ofRole(s, 'assistant')[3].message as AssistantMessage
    expect(reply.content).toEqual([
      { type: 'text', text: 'Fixed `sum`; one test about negatives still fails.' },
    ])
    expect(reply.usage).toEqual({ input: 7000, output: 40, cache_read: 5000, reasoning: 0 })
    // The second turn runs on the model of the later turn_context.
    expect((ofRole(s, 'assistant')[4].message as AssistantMessage).model).toBe('gpt-5.2-codex-max')
    expect(s.entries.find((e) => e.kind === 'custom' && e.custom_type === 'compaction')).toMatchObject({
      data: {
        source: 'codex',
        summary: 'Summary: fixed sum in src/sum.ts; a negatives test still fails.',
        replacement_items: 2,
      },
    })
    expect(s.entries.at(-1)).toMatchObject({
      kind: 'custom',
      custom_type: 'codex/turn_aborted',
      data: { type: 'turn_aborted', reason: 'interrupted' },
    })
    // The interrupted call has no output: said, not hidden.
    expect(unansweredCalls(s)).toEqual(['call_test_2'])
    expect(codes(r)).toEqual(['unpaired-call'])
    expect(summarize(s).usage).toMatchObject({ input: 18000, output: 300, cache_read: 10000, reasoning: 64 })
    expect(r.skipped).toMatchObject({
      'event_msg/agent_message (copy of a response item)': 1,
      'compacted.replacement_history item': 2,
      'event_msg/context_compacted': 1,
    })
  })
})

describe('Gemini CLI (hand-made fixtures)', () => {
  it('a JSONL rewind leaves the discarded messages as a sibling branch, not the active path', async () => {
    const r = await importTranscript(fixture('gemini-rewind.jsonl'))
    const s = r.sessions[0]
    expect(s.meta.title).toBe('Write a colour doc')
    const g1result = 'g1:write_file-1777712408000-ab12cd'
    expect(childrenOf(s, g1result)).toEqual(['u2', 'u3'])
    expect(pathIds(s)).toEqual([
      'u1',
      'g1',
      g1result,
      'u3',
      'g3',
      'g3:run_shell_command-1777712525000-cd56ef',
      'g3:run_shell_command-1777712526000-0f0f0f',
      'i1',
    ])
    expect(pathIds(s, 'g2:write_file-1777712464000-ef34ab')).toEqual([
      'u1',
      'g1',
      g1result,
      'u2',
      'g2',
      'g2:write_file-1777712464000-ef34ab',
    ])
    // g1 was re-appended when its call finished: the later record replaced the executing one.
    expect((byId(s).get(g1result)! as { message: FunctionResultMessage }).message).toMatchObject({
      content: [{ type: 'text', text: 'Successfully created and wrote to new file: docs/color.md.' }],
      is_error: false,
      details: { status: 'success', displayName: 'WriteFile' },
    })
    expect((byId(s).get('g1')! as { message: AssistantMessage }).message.content[0]).toEqual({
      type: 'thinking',
      text: '**Picking a colour**\n\nBlue is a safe first choice.',
    })
    const failed = (
      byId(s).get('g3:run_shell_command-1777712525000-cd56ef')! as { message: FunctionResultMessage }
    ).message
    expect(failed).toMatchObject({
      is_error: true,
      content: [{ type: 'text', text: 'Command exited with code 1: MD041 first line should be a heading' }],
    })
    // A call the user cancelled has a result that says so; inline image data is an image block.
    expect(
      (byId(s).get('g3:run_shell_command-1777712526000-0f0f0f')! as { message: FunctionResultMessage })
        .message,
    ).toMatchObject({
      is_error: true,
      content: [{ type: 'text', text: '[cancelled]' }],
      details: { status: 'cancelled' },
    })
    expect(
      ofRole(s, 'user')
        .find((e) => e.id === 'u3')!
        .message.content.map((b) => b.type),
    ).toEqual(['text', 'image'])
    expect(messages(s).at(-1)!.message).toMatchObject({ role: 'custom', custom_type: 'gemini/info' })
    expect(summarize(s)).toMatchObject({ forks: 1, branches: 2 })
    expect(r.warnings).toEqual([])
    expect(r.skipped).toEqual({ '$rewindTo (discarded messages kept as a branch)': 1 })
  })

  it('a $set.messages checkpoint (after /compress) keeps the old history above a compaction entry', async () => {
    const r = await importTranscript(fixture('gemini-checkpoint.jsonl'))
    const s = r.sessions[0]
    const marker = s.entries.find((e) => e.kind === 'custom')!
    expect(marker).toMatchObject({
      custom_type: 'compaction',
      parent_id: 'g2',
      data: { source: 'gemini', kind: 'checkpoint', messages: 2 },
    })
    // g2 appears again in the new history: a fresh entry id, the old one untouched.
    expect(pathIds(s)).toEqual(['u1', 'g1', 'u2', 'g2', marker.id, 'c1', 'g2~2', 'u3', 'g3'])
    expect(ofRole(s, 'user')[2].message.content[0]).toMatchObject({
      text: expect.stringMatching(/^Summary of the conversation so far/),
    })
    expect(r.warnings).toEqual([])
  })

  it('a rewind to an unknown id discards everything before new messages, which start a new root', async () => {
    const text = [
      JSON.stringify({
        sessionId: 's-unknown',
        projectHash: 'x',
        startTime: '2026-05-01T00:00:00Z',
        lastUpdated: '2026-05-01T00:00:00Z',
        kind: 'main',
      }),
      JSON.stringify({ id: 'a', timestamp: '2026-05-01T00:00:01Z', type: 'user', content: 'first try' }),
      JSON.stringify({ $rewindTo: 'no-such-id' }),
      JSON.stringify({ id: 'b', timestamp: '2026-05-01T00:00:02Z', type: 'user', content: 'second try' }),
    ].join('\n')
    const s = (await importTranscript(text)).sessions[0]
    expect(childrenOf(s, null)).toEqual(['a', 'b'])
    expect(pathIds(s)).toEqual(['b'])
  })
})

describe('Codex forks and newer items (hand-made fixture)', () => {
  it('a forked rollout: its own session_meta first, the copied one skipped; array outputs, local shell, server compaction, old failures', async () => {
    const r = await importTranscript(fixture('codex-fork.jsonl'))
    const s = r.sessions[0]
    expect(s.meta).toMatchObject({
      session_id: '019c7d00-1111-7222-8333-944455556666',
      forked_from: '019bb1c2-7a00-7c3e-9f10-4d5e6f7a8b9c',
      metadata: { cli_version: '0.98.0' },
    })
    expect(r.skipped).toMatchObject({ 'session_meta (copied from the parent rollout)': 1 })
    const shot = blocksOf(s, 'function_call')[0]
    expect(shot).toMatchObject({
      id: 'call_shot',
      function_id: 'local_shell',
      arguments: {
        type: 'exec',
        command: ['npx', 'playwright', 'screenshot', 'http://localhost:3000', 'shot.png'],
      },
    })
    const [out, plan] = ofRole(s, 'function_result').map((e) => e.message as FunctionResultMessage)
    expect(out.content.map((b) => b.type)).toEqual(['text', 'image'])
    expect(plan).toMatchObject({
      function_id: 'update_plan',
      is_error: true,
      content: [{ type: 'text', text: 'failed to update plan: plan too long' }],
    })
    expect(s.entries.find((e) => e.kind === 'custom')).toMatchObject({
      custom_type: 'compaction',
      data: { source: 'codex', encrypted_content: 'gAAAAABpServerSideCompaction' },
    })
    expect(unansweredCalls(s)).toEqual([])
    expect(r.warnings).toEqual([])
  })
})

describe('a folder of single-file transcripts', () => {
  it('imports each rollout as its own session and names the files it skipped', async () => {
    const r = await importTranscript({
      'sessions/2025/06/10/rollout-2025-06-10T16-02-11-5f0c3a52.jsonl': fixture('codex-legacy.jsonl'),
      'sessions/2026/01/12/rollout-2026-01-12T09-00-00-019bb1c2.jsonl': fixture('codex-current.jsonl'),
      'sessions/notes.txt': 'remember to archive these',
    })
    expect(r.format).toBe('codex')
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual([
      '5f0c3a52-2c1e-4a7e-9d3f-0b1c2d3e4f50',
      '019bb1c2-7a00-7c3e-9f10-4d5e6f7a8b9c',
    ])
    expect(r.warnings.find((w) => w.code === 'not-a-transcript')).toEqual({
      code: 'not-a-transcript',
      message: 'sessions/notes.txt is not a codex transcript; skipped',
      file: 'sessions/notes.txt',
    })
  })
})

describe('Codex token accounting', () => {
  it('repeated cumulative totals count once', async () => {
    const r = await importTranscript(fixture('codex-current.jsonl'))
    const usages = ofRole(r.sessions[0], 'assistant').map(
      (e) => (e.message as AssistantMessage).usage?.input ?? 0,
    )
    expect(usages).toEqual([5000, 6000, 0, 7000, 0])
    expect((r.sessions[0].meta.metadata!.total_token_usage as JsonObject).total_tokens).toBe(18300)
  })
})
