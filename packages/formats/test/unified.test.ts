import { createStore, memoryStorage, type SessionImport } from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { describe, expect, it } from 'vitest'
import { exportUnified, importInto, importTranscript, readSession } from '../src/index.js'
import { toUnified } from '../src/unified/export.js'
import { nodeSqlite } from '../src/node.js'
import { codes, fixture, fixtureText, pathIds, sample, sampleText } from './helpers.js'
import { openCodeDb } from './fixtures/opencode.js'

// Colloquy → unified agent-history JSON 1.0 → Colloquy must give back the same tree: every
// entry (id, parent, content, role fields), the active leaf and the session meta.

type Obj = Record<string, unknown>

/** A session as core stores it (normalised), entries keyed by id so order does not matter. */
function normal(s: SessionImport): { meta: unknown; entries: Map<string, unknown>; leaf: string | null } {
  const c = checkImport(s)
  return { meta: c.meta, entries: new Map(c.entries.map((e) => [e.id, e])), leaf: c.active_leaf }
}

async function roundTrip(sessions: SessionImport[]): Promise<void> {
  const text = exportUnified(sessions)
  const back = await importTranscript(text)
  expect(back.format).toBe('unified')
  expect(back.warnings).toEqual([])
  expect(back.sessions.map((s) => s.meta.session_id)).toEqual(sessions.map((s) => s.meta.session_id))
  back.sessions.forEach((s, i) => expect(normal(s)).toEqual(normal(sessions[i])))
}

const SOURCES: [string, () => Promise<SessionImport[]>][] = [
  [
    'Claude Code parallel tools',
    async () =>
      (await importTranscript(sample('claude-code/entire_cc-2.1.7_parallel-tools-task-subagent.jsonl')))
        .sessions,
  ],
  [
    'Claude Code fork after resume',
    async () =>
      (await importTranscript(sample('claude-code/entire_cc-2.1.7_fork-after-exit-resume.head.jsonl')))
        .sessions,
  ],
  [
    'Claude Code compaction',
    async () =>
      (await importTranscript(sample('claude-code/entire_cc-2.1.14_auto-compaction.head.jsonl'))).sessions,
  ],
  [
    'Claude Code inline sidechains (3 sessions)',
    async () =>
      (await importTranscript(sample('claude-code/claude-code-viewer_cc-1.0.108_inline-sidechains.jsonl')))
        .sessions,
  ],
  [
    'Claude Code regenerate',
    async () => (await importTranscript(fixture('claude-regenerate.jsonl'))).sessions,
  ],
  ['Claude Code rewind', async () => (await importTranscript(fixture('claude-rewind.jsonl'))).sessions],
  [
    'Claude Code images and documents',
    async () => (await importTranscript(fixture('claude-images.jsonl'))).sessions,
  ],
  [
    'Claude Code microcompaction',
    async () => (await importTranscript(fixture('claude-microcompact.jsonl'))).sessions,
  ],
  [
    'Codex 0.58',
    async () =>
      (await importTranscript(sample('codex/acidicsoil_rollout-0.58.0_gpt-5.1-codex.head.jsonl'))).sessions,
  ],
  ['Codex current', async () => (await importTranscript(fixture('codex-current.jsonl'))).sessions],
  [
    'Gemini JSON',
    async () => (await importTranscript(sample('gemini/entire_gemini-cli-0.23_session.json'))).sessions,
  ],
  ['Gemini rewind', async () => (await importTranscript(fixture('gemini-rewind.jsonl'))).sessions],
  [
    'OpenCode SQLite with branches',
    async () =>
      (await importTranscript(await openCodeDb(await nodeSqlite()), { sqlite: await nodeSqlite() })).sessions,
  ],
  [
    'OPA',
    async () =>
      (await importTranscript(sample('opa/opa-spec_session-history-0.1_spec-example.json'))).sessions,
  ],
]

describe('unified JSON 1.0 round trip', () => {
  for (const [name, load] of SOURCES) {
    it(`${name}: same ids, parents, content, metadata and active leaf`, async () => roundTrip(await load()))
  }

  it('through a store: import, read back every branch, export, import again', async () => {
    const store = await createStore({ storage: memoryStorage(), multiTab: false })
    const original = (await importTranscript(fixture('claude-rewind.jsonl'))).sessions
    await importInto(store, fixture('claude-rewind.jsonl'))
    const stored = await readSession(store, 'sess-rewind')
    expect(stored.entries).toHaveLength(10)
    const back = await importTranscript(exportUnified(stored))
    expect(normal(back.sessions[0])).toEqual(normal(original[0]))
    await store.close()
  })
})

describe('unified JSON 1.0 export', () => {
  it('writes 1.0 fields: tool results as user messages, fork points, the active path', async () => {
    const [s] = (await importTranscript(fixture('claude-rewind.jsonl'))).sessions
    const doc = toUnified(s, { exportedAt: Date.UTC(2026, 2, 1) }) as {
      session: Obj
      messages: Obj[]
      graph: Obj
      export_timestamp: string
      agent: string
    }
    expect(doc.export_timestamp).toBe('2026-03-01T00:00:00.000Z')
    expect(doc.agent).toBe('claude-code')
    expect(doc.session).toMatchObject({
      id: 'sess-rewind',
      workspace: '/work/demo',
      workspace_encoded: '-work-demo',
      is_agent_session: false,
      parent_session_id: null,
    })
    expect(doc.messages.map((m) => m.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(doc.messages.map((m) => m.uuid)).toEqual([
      'u-1',
      'a-1',
      'r-1',
      'a-3',
      'u-2',
      'a-4',
      'r-2',
      'a-5',
      'u-3',
      'a-6',
    ])
    const result = doc.messages.find((m) => m.uuid === 'r-2')!
    expect(result).toMatchObject({
      role: 'user',
      parent_uuid: 'a-4',
      content: [
        {
          type: 'tool_result',
          tool_id: 'toolu_rm',
          tool_name: 'Bash',
          output: 'rm: tmp/a.log: Permission denied',
          is_error: true,
        },
      ],
    })
    expect(doc.messages.find((m) => m.uuid === 'a-1')).toMatchObject({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look.' },
        {
          type: 'tool_use',
          tool_id: 'toolu_ls',
          tool_name: 'Bash',
          input: { command: 'ls tmp', description: 'List tmp' },
        },
      ],
      metadata: {
        model: { name: 'claude-opus-4-5-20251101', stop_reason: 'function_call' },
        token_usage: {
          input_tokens: 12,
          output_tokens: 30,
          cache_creation_tokens: 100,
          cache_read_tokens: 2000,
        },
      },
    })
    expect(doc.graph).toEqual({
      is_linear: false,
      fork_points: [
        {
          uuid: 'a-3',
          index: 4,
          branches: [
            { uuid: 'u-2', index: 5 },
            { uuid: 'u-3', index: 9 },
          ],
        },
      ],
      active_path: ['u-1', 'a-1', 'r-1', 'a-3', 'u-3', 'a-6'],
    })
  })

  it('several sessions are NDJSON, one document per line', async () => {
    const r = await importTranscript(
      sample('claude-code/claude-code-viewer_cc-1.0.108_inline-sidechains.jsonl'),
    )
    const text = exportUnified(r.sessions)
    const lines = text.trimEnd().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines.map((l) => (JSON.parse(l) as { session: Obj }).session.is_agent_session)).toEqual([
      false,
      true,
      true,
    ])
    expect(lines.map((l) => (JSON.parse(l) as { session: Obj }).session.parent_session_id)).toEqual([
      null,
      '5c0375b4-57a5-4f26-b12d-d022ee4e51b7',
      '5c0375b4-57a5-4f26-b12d-d022ee4e51b7',
    ])
  })
})

describe('unified JSON 1.0 written by others', () => {
  it('graph.active_path picks the active branch even when another branch is newer', async () => {
    const r = await importTranscript(fixture('unified-branches.json'))
    const s = r.sessions[0]
    expect(pathIds(s)).toEqual(['m1', 'm2', 'm3', 'm4a', 'm5a'])
    expect(s.entries.find((e) => e.id === 'm5b')).toMatchObject({
      origin: { is_meta: true },
      message: { role: 'custom', custom_type: 'system' },
    })
    expect(s.entries.find((e) => e.id === 'm3')).toMatchObject({
      message: { role: 'function_result', function_call_id: 'toolu_cart', function_id: 'Read' },
    })
    expect(r.warnings).toEqual([])
  })

  it('fork points or an active path that contradict parent_uuid are reported; the links win', async () => {
    const doc = JSON.parse(fixtureText('unified-branches.json')) as {
      graph: { fork_points: unknown[]; active_path: string[] }
    }
    doc.graph.fork_points = []
    doc.graph.active_path = ['m1', 'm3', 'm4b']
    const r = await importTranscript(JSON.stringify(doc))
    expect(codes(r)).toEqual(['graph-mismatch', 'graph-mismatch'])
    expect(pathIds(r.sessions[0])).toEqual(['m1', 'm2', 'm3', 'm4b'])
  })

  it('messages without uuid or parent_uuid follow each other', async () => {
    const doc = JSON.parse(
      sampleText('unified-agent-history/agent-history_unified-schema-1.0_doc-example.json'),
    ) as { messages: Obj[] }
    for (const m of doc.messages) {
      delete m.uuid
      delete m.parent_uuid
    }
    const r = await importTranscript(JSON.stringify(doc))
    expect(pathIds(r.sessions[0])).toEqual(['m1', 'm2', 'm3'])
  })

  it('the 2.0 NDJSON design is refused with a clear error', async () => {
    const text = `${JSON.stringify({ type: 'header', schema_version: '2.0', export_timestamp: '2026-01-01T00:00:00Z', session_count: 1 })}\n`
    await expect(importTranscript(text)).rejects.toThrow(
      'format/unsupported: unified agent-history schema 2.0 is not supported (only 1.0)',
    )
  })
})
