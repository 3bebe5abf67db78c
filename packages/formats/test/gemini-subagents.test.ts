import type { JsonObject } from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import { describe, expect, it } from 'vitest'
import { importTranscript } from '../src/index.js'
import { codes } from './helpers.js'

// Gemini CLI sub-agent chats (2026-03+), no real one in the samples: written in the shape
// gemini-cli's ChatRecordingService and LocalAgentExecutor write (spec §3.1/3.3). The main chat
// is `chats/session-<time>-<8 hex>.jsonl`; a run is `chats/<parent session id>/<agent id>.jsonl`
// whose metadata line says `kind: "subagent"` and whose `sessionId` is the agent id; the
// parent's tool call carries `agentId`; the run's summary is its result cut at 200 characters
// (for codebase_investigator a JSON report).

const MAIN = 'd3c1f0a2-5b6e-4c7d-8e9f-0a1b2c3d4e5f'
const RUN = '7f3e2d1c-0b9a-4876-a5b4-c3d2e1f0a9b8'
const GONE = '11111111-2222-4333-8444-555555555555'
const lines = (...records: unknown[]): string => records.map((r) => `${JSON.stringify(r)}\n`).join('')
const meta = (sessionId: string, kind: 'main' | 'subagent') => ({
  sessionId,
  projectHash: 'a'.repeat(64),
  startTime: '2026-04-20T10:00:00.000Z',
  lastUpdated: '2026-04-20T10:05:00.000Z',
  kind,
  ...(kind === 'subagent' && { directories: ['/home/me/app'] }),
})
const objective = 'Find where auth tokens are refreshed'
const report = JSON.stringify(
  {
    report: {
      summary: 'Tokens refresh in src/auth/refresh.ts',
      files: ['src/auth/refresh.ts', 'src/auth/clock.ts'],
    },
  },
  null,
  2,
)

function subagentCall(id: string, agentId: string) {
  return {
    id,
    name: 'codebase_investigator',
    args: { objective },
    status: 'success',
    timestamp: '2026-04-20T10:04:00.000Z',
    agentId,
    result: [
      {
        functionResponse: {
          id,
          name: 'codebase_investigator',
          response: {
            output: `Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\n${report}`,
          },
        },
      },
    ],
    description: `Running subagent 'codebase_investigator' with inputs: { objective: ${objective} }`,
  }
}

const mainChat = lines(
  meta(MAIN, 'main'),
  {
    id: 'u1',
    timestamp: '2026-04-20T10:00:10.000Z',
    type: 'user',
    content: [{ text: 'Why do users get logged out after ten minutes?' }],
  },
  {
    id: 'g1',
    timestamp: '2026-04-20T10:00:20.000Z',
    type: 'gemini',
    content: '',
    model: 'gemini-3-pro-preview',
    toolCalls: [
      subagentCall('codebase_investigator-1776679460000-aa11', RUN),
      subagentCall('codebase_investigator-1776679470000-bb22', GONE),
    ],
  },
  {
    id: 'g2',
    timestamp: '2026-04-20T10:04:30.000Z',
    type: 'gemini',
    content: 'The refresh uses the wrong clock.',
    model: 'gemini-3-pro-preview',
  },
)
const runChat = lines(
  meta(RUN, 'subagent'),
  {
    id: 's1',
    timestamp: '2026-04-20T10:00:21.000Z',
    type: 'user',
    content: [
      {
        text: `Your task is to do a deep investigation of the codebase for the following user objective:\n<objective>\n${objective}\n</objective>`,
      },
    ],
  },
  {
    id: 's2',
    timestamp: '2026-04-20T10:03:50.000Z',
    type: 'gemini',
    content: '',
    model: 'gemini-3-flash-preview',
    toolCalls: [
      {
        id: 'complete_task-1',
        name: 'complete_task',
        args: { report: JSON.parse(report).report },
        status: 'success',
        timestamp: '2026-04-20T10:03:55.000Z',
        result: [
          {
            functionResponse: {
              id: 'complete_task-1',
              name: 'complete_task',
              response: { output: 'Output submitted and task completed.' },
            },
          },
        ],
      },
    ],
  },
  { $set: { summary: `${report.slice(0, 197)}...` } },
)

describe('Gemini CLI sub-agent chats', () => {
  it('a run in chats/<parent>/ is linked to the call that ran it, both ways, and titled by its task, not its JSON summary', async () => {
    const r = await importTranscript({
      [`chats/session-2026-04-20T10-00-${MAIN.slice(0, 8)}.jsonl`]: mainChat,
      [`chats/${MAIN}/${RUN}.jsonl`]: runChat,
    })
    expect(r.format).toBe('gemini')
    for (const s of r.sessions) expect(() => checkImport(s)).not.toThrow()
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual([MAIN, RUN])
    const [main, run] = r.sessions
    expect(run.meta.metadata).toMatchObject({
      kind: 'subagent',
      sidechain: true,
      parent_session_id: MAIN,
      parent_tool_call_id: 'codebase_investigator-1776679460000-aa11',
      agent_id: RUN,
      agent_type: 'codebase_investigator',
    })
    expect(run.meta.title).toBe(`codebase_investigator: ${objective}`)
    expect(main.meta.metadata!.sidechains).toEqual([
      { session_id: RUN, agent_id: RUN, tool_call_id: 'codebase_investigator-1776679460000-aa11' },
      {
        session_id: GONE,
        agent_id: GONE,
        tool_call_id: 'codebase_investigator-1776679470000-bb22',
        present: false,
      },
    ])
    expect(main.meta.title).toBe('Why do users get logged out after ten minutes?')
    expect(codes(r)).toEqual(['subagent-missing'])
    expect(r.warnings[0].message).toContain(`chats/${MAIN}/${GONE}.jsonl`)
  })

  it('a run whose call is in no chat is linked by its folder; one whose parent is absent is its own, with a warning; never a JSON title', async () => {
    const noCall = lines(meta(MAIN, 'main'), {
      id: 'u1',
      timestamp: '2026-04-20T10:00:10.000Z',
      type: 'user',
      content: 'hello',
    })
    const r = await importTranscript({
      [`chats/session-x.jsonl`]: noCall,
      [`chats/${MAIN}/${RUN}.jsonl`]: runChat,
      [`chats/${GONE}/${RUN.replace('7f', '8f')}.jsonl`]: runChat.replaceAll(RUN, RUN.replace('7f', '8f')),
    })
    expect(r.sessions.map((s) => s.meta.session_id)).toEqual([MAIN, RUN, RUN.replace('7f', '8f')])
    const [main, run, orphan] = r.sessions
    expect(run.meta.metadata).toMatchObject({ parent_session_id: MAIN, agent_id: RUN })
    expect(run.meta.metadata).not.toHaveProperty('parent_tool_call_id')
    expect(main.meta.metadata!.sidechains).toEqual([{ session_id: RUN, agent_id: RUN }])
    expect(orphan.meta.metadata).not.toHaveProperty('parent_session_id')
    expect(codes(r)).toEqual(['subagent-orphan'])
    expect(r.warnings[0].message).toBe(
      `sub-agent chat ${RUN.replace('7f', '8f')}: its parent session ${GONE} is not in this input; imported on its own`,
    )
    // Unlinked, the title is the user's first words, not the summary's JSON.
    for (const s of [run, orphan])
      expect(s.meta.title).toBe(
        'Your task is to do a deep investigation of the codebase for the following user …',
      )
  })

  it('a run file alone says it has no parent here', async () => {
    const r = await importTranscript(runChat)
    expect(r.sessions.map((s) => [s.meta.session_id, s.meta.metadata!.sidechain])).toEqual([[RUN, true]])
    expect(r.sessions[0].meta.title).not.toMatch(/^[[{]/)
    expect(codes(r)).toEqual(['subagent-orphan'])
  })

  it('the main chat alone lists the run as missing', async () => {
    const r = await importTranscript(mainChat)
    expect((r.sessions[0].meta.metadata!.sidechains as JsonObject[]).map((l) => l.present)).toEqual([
      false,
      false,
    ])
    expect(codes(r)).toEqual(['subagent-missing', 'subagent-missing'])
  })
})
