import { type SessionEntry, type SessionImport } from '@colloquy/core'
import { checkImport } from '@colloquy/core/wire'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { exportChatGpt, exportOpa, exportOpenWebUi, exportUnified, importTranscript } from '../src/index.js'
import { misplacedResults, ofRole, pathIds, unansweredCalls } from './helpers.js'

// Tree fidelity as a property: whatever records sit between the messages of a transcript, the
// imported tree has exactly the forks the source has (after the documented merges: the lines
// of one API response are one message, parallel calls' results chain under their call, progress
// and telemetry are transparent). Transcripts are generated from a random conversation tree,
// written the ways the tools write them (the format study, spec §1-6, and ../shared/samples),
// with random bookkeeping records interleaved everywhere, between a call and its result and
// between a result and the next message included.

interface Shape {
  roots: number
  /** Entries (or the root level) with two or more children. */
  forks: number
  leaves: number
}

function shape(entries: readonly SessionEntry[]): Shape {
  const kids = new Map<string | null, number>()
  for (const e of entries) kids.set(e.parent_id, (kids.get(e.parent_id) ?? 0) + 1)
  let forks = 0
  for (const n of kids.values()) if (n >= 2) forks++
  return { roots: kids.get(null) ?? 0, forks, leaves: entries.filter((e) => !kids.has(e.id)).length }
}

/** The shape of a source tree given as child → parent (null: a root). */
function sourceShape(parents: ReadonlyMap<string, string | null>): Shape {
  const kids = new Map<string | null, number>()
  for (const p of parents.values()) kids.set(p, (kids.get(p) ?? 0) + 1)
  let forks = 0
  for (const n of kids.values()) if (n >= 2) forks++
  return { roots: kids.get(null) ?? 0, forks, leaves: [...parents.keys()].filter((k) => !kids.has(k)).length }
}

/** A conversation tree: turn i (i ≥ 1) continues from turn `parentOf[i]` (a rewind when not i - 1). */
const turnTree = (max: number) =>
  fc
    .array(fc.nat(), { minLength: 1, maxLength: max })
    .map((picks) => picks.map((p, i) => (i === 0 ? -1 : p % 4 === 0 ? p % i : i - 1)))

function turnShape(parentOf: number[]): Shape {
  const parents = new Map<string, string | null>(parentOf.map((p, i) => [`t${i}`, p < 0 ? null : `t${p}`]))
  return sourceShape(parents)
}

const valid = (s: SessionImport): void => {
  expect(() => checkImport(s)).not.toThrow()
}

// ---------------------------------------------------------------------------------------------
// Claude Code
// ---------------------------------------------------------------------------------------------

/** Records Claude Code writes into the uuid tree or beside it that are not conversation turns. */
const JUNK = [
  'progress',
  'progress-side',
  'telemetry',
  'hook',
  'attachment',
  'local',
  'snapshot',
  'last-prompt',
  'permission',
  'queue',
  'summary',
  'ai-title',
] as const
type Junk = (typeof JUNK)[number]

interface Round {
  /** Lines of text/thinking before the calls. */
  lead: number
  calls: number
  /** How results are written: after all calls (1.0.x), interleaved (2.x streaming), or each under its own call line (2.x parallel). */
  style: 'after' | 'interleaved' | 'parallel'
}

const ccPlan = fc.record({
  turns: turnTree(6),
  rounds: fc.array(
    fc.array(
      fc.record({
        lead: fc.integer({ min: 0, max: 2 }),
        calls: fc.integer({ min: 1, max: 3 }),
        style: fc.constantFrom('after', 'interleaved', 'parallel'),
      }),
      { maxLength: 3 },
    ),
    { minLength: 6, maxLength: 6 },
  ),
  junk: fc.array(fc.array(fc.constantFrom(...JUNK), { maxLength: 2 }), { minLength: 1, maxLength: 120 }),
  rootRecord: fc.constantFrom('none', 'progress', 'attachment'),
  version: fc.constantFrom('1.0.51', '2.0.28', '2.1.114'),
  entrypoint: fc.constantFrom('cli', 'sdk-ts', 'sdk-py', 'sdk-cli', undefined),
  bedrock: fc.boolean(),
  swaps: fc.array(fc.nat(), { maxLength: 30 }),
})

type CcPlan = typeof ccPlan extends fc.Arbitrary<infer P> ? P : never

export function claudeTranscript(plan: CcPlan) {
  const lines: Record<string, unknown>[] = []
  let n = 0
  let time = Date.UTC(2026, 0, 1)
  let junkAt = 0
  const env = (parent: string | null): Record<string, unknown> => ({
    parentUuid: parent,
    isSidechain: false,
    userType: 'external',
    cwd: '/w',
    sessionId: 'sess',
    version: plan.version,
    ...(plan.entrypoint && { entrypoint: plan.entrypoint }),
    uuid: `u${n++}`,
    timestamp: new Date((time += 1000)).toISOString(),
  })
  const emit = (o: Record<string, unknown>): string => {
    lines.push(o)
    return o.uuid as string
  }
  /** Bookkeeping between two records of the chain; returns the new tip. */
  const junk = (tip: string | null): string | null => {
    for (const kind of plan.junk[junkAt++ % plan.junk.length] as Junk[]) {
      if (kind === 'progress')
        tip = emit({
          ...env(tip),
          type: 'progress',
          data: { type: 'hook_progress', hookEvent: 'PostToolUse' },
        })
      else if (kind === 'progress-side')
        emit({ ...env(tip), type: 'progress', data: { type: 'bash_progress' } })
      else if (kind === 'telemetry')
        tip = emit({ ...env(tip), type: 'system', subtype: 'stop_hook_summary', hookCount: 1 })
      else if (kind === 'hook')
        tip = emit({
          ...env(tip),
          type: 'system',
          content: '\u001b[1mPostToolUse:Bash\u001b[22m [echo ok] completed successfully',
          level: 'info',
          toolUseID: 'toolu_x',
          isMeta: false,
        })
      else if (kind === 'attachment')
        tip = emit({
          ...env(tip),
          type: 'attachment',
          attachment: { type: 'hook_success', hookName: 'PostToolUse:Bash', content: 'ok' },
        })
      else if (kind === 'local')
        tip = emit({
          ...env(tip),
          type: 'system',
          subtype: 'local_command',
          content: '<local-command-stdout>ok</local-command-stdout>',
          level: 'info',
        })
      else if (kind === 'snapshot')
        lines.push({
          type: 'file-history-snapshot',
          messageId: `m${n++}`,
          snapshot: {},
          isSnapshotUpdate: false,
        })
      else if (kind === 'last-prompt') lines.push({ type: 'last-prompt', lastPrompt: 'x', sessionId: 'sess' })
      else if (kind === 'permission')
        lines.push({ type: 'permission-mode', permissionMode: 'default', sessionId: 'sess' })
      else if (kind === 'queue')
        lines.push({
          type: 'queue-operation',
          operation: 'enqueue',
          timestamp: new Date(time).toISOString(),
          sessionId: 'sess',
        })
      else if (kind === 'summary')
        lines.push({ type: 'summary', summary: 'A summary', leafUuid: 'elsewhere' })
      else lines.push({ type: 'ai-title', aiTitle: 'Generated title', sessionId: 'sess' })
    }
    return tip
  }
  let msg = 0
  let call = 0
  const counts = { responses: 0, calls: 0 }
  const assistant = (parent: string | null, id: string, content: unknown[]): string =>
    emit({
      ...env(parent),
      type: 'assistant',
      ...(!plan.bedrock && { requestId: `req_${id}` }),
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content,
        stop_reason: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    })
  const result = (parent: string | null, callId: string): string =>
    emit({
      ...env(parent),
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content: 'ok' }] },
      toolUseResult: { stdout: 'ok' },
    })

  let tip: string | null = null
  if (plan.rootRecord === 'progress')
    tip = emit({ ...env(null), type: 'progress', data: { type: 'hook_progress', hookEvent: 'SessionStart' } })
  if (plan.rootRecord === 'attachment')
    tip = emit({
      ...env(null),
      type: 'attachment',
      attachment: { type: 'hook_success', hookName: 'SessionStart' },
    })
  const ends: (string | null)[] = []
  plan.turns.forEach((from, t) => {
    tip = from < 0 ? tip : ends[from]
    tip = emit({ ...env(tip), type: 'user', message: { role: 'user', content: `prompt ${t}` } })
    tip = junk(tip)
    for (const r of plan.rounds[t] as Round[]) {
      const id = `msg_${msg++}`
      counts.responses++
      for (let i = 0; i < r.lead; i++)
        tip = junk(
          assistant(tip, id, [
            i % 2
              ? { type: 'text', text: 'let me see' }
              : { type: 'thinking', thinking: 'hm', signature: 'sig' },
          ]),
        )
      const ids = Array.from({ length: r.calls }, () => `toolu_${call++}`)
      counts.calls += ids.length
      const style = r.calls < 2 && r.style === 'parallel' ? 'after' : r.style
      if (style === 'interleaved') {
        for (const c of ids) {
          tip = junk(
            assistant(tip, id, [{ type: 'tool_use', id: c, name: 'Bash', input: { command: 'ls' } }]),
          )
          tip = junk(result(tip, c))
        }
      } else {
        const callLines = ids.map(
          (c) =>
            (tip = junk(
              assistant(tip, id, [{ type: 'tool_use', id: c, name: 'Bash', input: { command: 'ls' } }]),
            )),
        )
        if (style === 'after') for (const c of ids) tip = junk(result(tip, c))
        else {
          // Each result under its own call line, the last call's first; the chain goes on from the first call's.
          for (let i = ids.length - 1; i >= 1; i--) junk(result(callLines[i], ids[i]))
          tip = junk(result(callLines[0], ids[0]))
        }
      }
    }
    counts.responses++
    tip = junk(assistant(tip, `msg_${msg++}`, [{ type: 'text', text: `answer ${t}` }]))
    ends[t] = tip
  })
  // Children written before their parents: some neighbouring lines swapped.
  for (const s of plan.swaps) {
    const i = s % Math.max(1, lines.length - 1)
    if (i + 1 < lines.length) [lines[i], lines[i + 1]] = [lines[i + 1], lines[i]]
  }
  return { text: lines.map((l) => JSON.stringify(l)).join('\n'), counts }
}

describe('tree fidelity: Claude Code', () => {
  it('never invents a fork and never drops one, whatever records sit between the messages', async () => {
    await fc.assert(
      fc.asyncProperty(ccPlan, async (plan) => {
        const { text, counts } = claudeTranscript(plan)
        const r = await importTranscript(text, { format: 'claude-code' })
        expect(r.sessions).toHaveLength(1)
        const s = r.sessions[0]
        valid(s)
        const want = turnShape(plan.turns)
        expect(shape(s.entries)).toEqual({ roots: 1, forks: want.forks, leaves: want.leaves })
        expect(ofRole(s, 'user')).toHaveLength(plan.turns.length)
        expect(ofRole(s, 'assistant')).toHaveLength(counts.responses)
        expect(ofRole(s, 'function_result')).toHaveLength(counts.calls)
        expect(unansweredCalls(s)).toEqual([])
        expect(misplacedResults(s)).toEqual([])
        expect(r.warnings.filter((w) => w.code !== 'unknown-line')).toEqual([])
      }),
      { numRuns: 300 },
    )
  })

  it("the issue's case: a 1.0.x chain with an old-style hook line after every tool result imports with no fork", async () => {
    // Every line's parent is the line before; the response msg_1 goes on after each result.
    const env = { isSidechain: false, userType: 'external', cwd: '/w', sessionId: 's', version: '1.0.51' }
    const kinds = [
      'user',
      'text',
      'call',
      'result',
      'hook',
      'call',
      'result',
      'hook',
      'call',
      'result',
      'hook',
      'answer',
      'user',
      'answer2',
    ]
    let calls = 0
    let results = 0
    const lines = kinds.map((k, i) => {
      const base = {
        ...env,
        uuid: `l${i}`,
        parentUuid: i ? `l${i - 1}` : null,
        timestamp: new Date(Date.UTC(2025, 6, 1, 0, 0, i)).toISOString(),
      }
      if (k === 'user') return { ...base, type: 'user', message: { role: 'user', content: `prompt ${i}` } }
      if (k === 'text')
        return {
          ...base,
          type: 'assistant',
          message: {
            id: 'msg_1',
            role: 'assistant',
            model: 'claude-x',
            content: [{ type: 'text', text: 'Let me look.' }],
          },
        }
      if (k === 'call')
        return {
          ...base,
          type: 'assistant',
          message: {
            id: 'msg_1',
            role: 'assistant',
            model: 'claude-x',
            content: [{ type: 'tool_use', id: `toolu_${++calls}`, name: 'Edit', input: {} }],
          },
        }
      if (k === 'result')
        return {
          ...base,
          type: 'user',
          message: {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: `toolu_${++results}`, content: 'ok' }],
          },
        }
      if (k === 'hook')
        return {
          ...base,
          type: 'system',
          content: '\u001b[1mPostToolUse:Edit\u001b[22m [prettier --write] completed successfully',
          level: 'info',
          isMeta: false,
          toolUseID: `toolu_${results}`,
        }
      return {
        ...base,
        type: 'assistant',
        message: {
          id: `msg_${k}`,
          role: 'assistant',
          model: 'claude-x',
          content: [{ type: 'text', text: 'Done.' }],
        },
      }
    })
    const r = await importTranscript(lines.map((l) => JSON.stringify(l)).join('\n'))
    const s = r.sessions[0]
    valid(s)
    expect(shape(s.entries)).toEqual({ roots: 1, forks: 0, leaves: 1 })
    // The hook lines are kept, on the one path, each right after the result it followed.
    const byId = new Map(s.entries.map((e) => [e.id, e]))
    const path = pathIds(s)
      .map((id) => byId.get(id)!)
      .map((e) => (e.kind === 'custom' ? 'hook' : e.message.role))
    expect(path).toEqual([
      'user',
      'assistant',
      'function_result',
      'hook',
      'function_result',
      'hook',
      'function_result',
      'hook',
      'assistant',
      'user',
      'assistant',
    ])
    expect(unansweredCalls(s)).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
// Codex (linear: a rollout has no fork, whatever the interleaving)
// ---------------------------------------------------------------------------------------------

const CODEX_NOISE = [
  'turn_context',
  'token_count',
  'ghost_snapshot',
  'agent_reasoning',
  'developer',
  'task_started',
  'web_search',
  'reasoning',
] as const

const codexPlan = fc.record({
  turns: fc.array(
    fc.record({
      calls: fc.array(fc.constantFrom('exec_command', 'write_stdin', 'shell', 'apply_patch'), {
        maxLength: 3,
      }),
      answer: fc.boolean(),
      phase: fc.boolean(),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  noise: fc.array(fc.array(fc.constantFrom(...CODEX_NOISE), { maxLength: 2 }), {
    minLength: 1,
    maxLength: 60,
  }),
  envelope: fc.boolean(),
})

function codexRollout(plan: typeof codexPlan extends fc.Arbitrary<infer P> ? P : never): {
  text: string
  calls: number
} {
  const out: unknown[] = []
  let t = Date.UTC(2026, 1, 1)
  let k = 0
  // The pre-envelope shape: a bare header, bare items, no timestamps on items.
  const item = (payload: Record<string, unknown>, type = 'response_item') =>
    out.push(
      plan.envelope
        ? { timestamp: new Date((t += 1000)).toISOString(), type, payload }
        : type === 'response_item'
          ? payload
          : { record_type: 'state' },
    )
  if (plan.envelope)
    out.push({
      timestamp: new Date(t).toISOString(),
      type: 'session_meta',
      payload: {
        id: 'rollout-1',
        timestamp: new Date(t).toISOString(),
        cwd: '/w',
        originator: 'Codex Desktop',
        cli_version: '0.104.0',
        instructions: null,
      },
    })
  else out.push({ id: 'rollout-1', timestamp: new Date(t).toISOString(), instructions: null })
  let calls = 0
  const noise = (): void => {
    for (const kind of plan.noise[k++ % plan.noise.length]) {
      if (kind === 'turn_context') item({ cwd: '/w', model: 'gpt-5' }, 'turn_context')
      else if (kind === 'token_count') item({ type: 'token_count', info: null }, 'event_msg')
      else if (kind === 'agent_reasoning') item({ type: 'agent_reasoning', text: 'x' }, 'event_msg')
      else if (kind === 'task_started') item({ type: 'task_started' }, 'event_msg')
      else if (kind === 'ghost_snapshot') item({ type: 'ghost_snapshot', ghost_commit: { id: 'abc' } })
      else if (kind === 'developer')
        item({
          type: 'message',
          role: 'developer',
          content: [{ type: 'input_text', text: '<permissions>…</permissions>' }],
        })
      else if (kind === 'web_search') item({ type: 'web_search_call', status: 'completed' })
      else
        item({
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: 'thinking' }],
          encrypted_content: 'gAAA',
        })
    }
  }
  plan.turns.forEach((turn, i) => {
    noise()
    item({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `prompt ${i}` }] })
    noise()
    turn.calls.forEach((name, j) => {
      const id = `call_${i}_${j}`
      calls++
      if (name === 'apply_patch')
        item({ type: 'custom_tool_call', call_id: id, name, input: '*** Begin Patch' })
      else
        item({
          type: 'function_call',
          call_id: id,
          name,
          arguments: JSON.stringify(name === 'write_stdin' ? { session_id: 1, chars: 'y\n' } : { cmd: 'ls' }),
        })
      noise()
      item(
        name === 'apply_patch'
          ? { type: 'custom_tool_call_output', call_id: id, output: 'Success.' }
          : { type: 'function_call_output', call_id: id, output: 'ok' },
      )
      noise()
    })
    if (turn.answer)
      item({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: `answer ${i}` }],
        ...(turn.phase && { phase: 'final_answer' }),
      })
    noise()
  })
  return { text: out.map((o) => JSON.stringify(o)).join('\n'), calls }
}

describe('tree fidelity: Codex', () => {
  it('a rollout is one chain, whatever the noise, with or without envelopes and assistant messages', async () => {
    await fc.assert(
      fc.asyncProperty(codexPlan, async (plan) => {
        const { text, calls } = codexRollout(plan)
        const r = await importTranscript(text, { format: 'codex' })
        const s = r.sessions[0]
        valid(s)
        expect(shape(s.entries)).toEqual({ roots: 1, forks: 0, leaves: 1 })
        expect(ofRole(s, 'user')).toHaveLength(plan.turns.length)
        // A web_search_call is a call and its result in one item; the others pair by call_id.
        expect(
          ofRole(s, 'function_result').filter(
            (e) => e.message.role === 'function_result' && e.message.function_id !== 'web_search',
          ),
        ).toHaveLength(calls)
        expect(unansweredCalls(s)).toEqual([])
      }),
      { numRuns: 150 },
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Chat exports: the tree is given by parent links; hidden and empty nodes sit anywhere in it
// ---------------------------------------------------------------------------------------------

/** A random tree of `n` nodes: node i's parent is one of the nodes before it (or none). */
const parentLinks = (max: number) =>
  fc
    .array(fc.nat(), { minLength: 1, maxLength: max })
    .map((picks) => picks.map((p, i) => (i === 0 ? -1 : p % 5 === 0 ? -1 : p % i)))

/** The source shape under one added root (the importers' thread_root), as the session must have it. */
function rootedShape(parents: number[], hasOwnRoot: boolean): Shape {
  const map = new Map<string, string | null>(
    parents.map((p, i) => [`n${i}`, p < 0 ? (hasOwnRoot ? null : 'root') : `n${p}`]),
  )
  if (!hasOwnRoot) map.set('root', null)
  return sourceShape(map)
}

describe('tree fidelity: ChatGPT, Claude.ai, Open WebUI', () => {
  const kinds = fc.array(
    fc.constantFrom('user', 'assistant', 'hidden-system', 'custom-instructions', 'null', 'tool', 'call'),
    { minLength: 60, maxLength: 60 },
  )

  it('ChatGPT: every mapping node kept, forks exactly where the mapping has them, current_node active', async () => {
    await fc.assert(
      fc.asyncProperty(parentLinks(40), kinds, fc.nat(), async (links, kind, pick) => {
        // The export's own root (message:null) is node 0; every other parentless node hangs off it.
        const parents = links.map((p, i) => (i === 0 ? -1 : p < 0 ? 0 : p))
        const mapping: Record<string, unknown> = {}
        parents.forEach((p, i) => {
          const children = parents.flatMap((q, j) => (q === i ? [`n${j}`] : []))
          const k = i === 0 ? 'null' : kind[i]
          const role =
            k === 'hidden-system'
              ? 'system'
              : k === 'custom-instructions' || k === 'user'
                ? 'user'
                : k === 'tool'
                  ? 'tool'
                  : 'assistant'
          const content =
            k === 'custom-instructions'
              ? { content_type: 'user_editable_context', user_profile: '', user_instructions: 'be brief' }
              : k === 'call'
                ? { content_type: 'code', language: 'unknown', text: 'search("x")' }
                : { content_type: 'text', parts: [`text ${i}`] }
          mapping[`n${i}`] = {
            id: `n${i}`,
            parent: p < 0 ? null : `n${p}`,
            children,
            message:
              k === 'null'
                ? null
                : {
                    id: `n${i}`,
                    author: { role, name: k === 'tool' ? 'browser' : null, metadata: {} },
                    create_time: 1700000000 + i,
                    content,
                    status: 'finished_successfully',
                    recipient: k === 'call' ? 'browser' : 'all',
                    metadata:
                      k.startsWith('hidden') || k === 'custom-instructions'
                        ? { is_visually_hidden_from_conversation: true }
                        : {},
                  },
          }
        })
        const leaves = parents.map((_, i) => `n${i}`).filter((id) => !parents.some((p) => `n${p}` === id))
        const current = leaves[pick % leaves.length]
        const r = await importTranscript(
          JSON.stringify([
            {
              title: 't',
              create_time: 1700000000,
              update_time: 1700000100,
              conversation_id: 'c',
              current_node: current,
              mapping,
            },
          ]),
        )
        expect(r.format).toBe('chatgpt')
        const s = r.sessions[0]
        valid(s)
        // Null-message nodes deeper than the root are transparent: the tree without them.
        const kept = new Map<string, string | null>()
        const up = (i: number): number => (i > 0 && kind[i] === 'null' ? up(parents[i]) : i)
        parents.forEach((p, i) => {
          if (i > 0 && kind[i] === 'null') return
          kept.set(`n${i}`, p < 0 ? null : `n${up(p)}`)
        })
        expect(shape(s.entries)).toEqual(sourceShape(kept))
        expect(s.entries).toHaveLength(kept.size)
        expect(s.active_leaf).toBe(`n${up(Number(current.slice(1)))}`)
        // Exported back to ChatGPT's shape: the same tree again.
        const back = (await importTranscript(exportChatGpt(s))).sessions[0]
        expect(back.entries.map((e) => [e.id, e.parent_id])).toEqual(
          s.entries.map((e) => [e.id, e.parent_id]),
        )
        expect(back.active_leaf).toBe(s.active_leaf)
      }),
      { numRuns: 200 },
    )
  })

  it('Open WebUI: parentId tree under one root, currentId active', async () => {
    await fc.assert(
      fc.asyncProperty(
        parentLinks(40),
        fc.array(fc.constantFrom('user', 'assistant', 'system'), { minLength: 40, maxLength: 40 }),
        fc.boolean(),
        async (parents, roles, bare) => {
          const messages: Record<string, unknown> = {}
          parents.forEach((p, i) => {
            messages[`n${i}`] = {
              id: `n${i}`,
              parentId: p < 0 ? null : `n${p}`,
              childrenIds: parents.flatMap((q, j) => (q === i ? [`n${j}`] : [])),
              role: roles[i],
              content: `m${i}`,
              timestamp: 1700000000 + i,
            }
          })
          const chat = { title: 'c', history: { currentId: `n${parents.length - 1}`, messages } }
          const doc = bare ? { id: '', ...chat } : [{ id: 'row', title: 'c', created_at: 1700000000, chat }]
          const r = await importTranscript(JSON.stringify(doc))
          expect(r.format).toBe('open-webui')
          const s = r.sessions[0]
          valid(s)
          expect(shape(s.entries)).toEqual(rootedShape(parents, false))
          expect(s.active_leaf).toBe(`n${parents.length - 1}`)
          const back = (await importTranscript(exportOpenWebUi(s))).sessions[0]
          expect(shape(back.entries)).toEqual(shape(s.entries))
          expect(back.active_leaf).toBe(s.active_leaf)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('Claude.ai: parent_message_uuid tree (parallel chains from the zero uuid) under one root, messages in any order', async () => {
    const ZERO = '00000000-0000-4000-8000-000000000000'
    await fc.assert(
      fc.asyncProperty(parentLinks(30), fc.array(fc.nat(), { maxLength: 30 }), async (parents, order) => {
        const list = parents.map((p, i) => ({
          uuid: `n${i}`,
          sender: i % 2 ? 'assistant' : 'human',
          parent_message_uuid: p < 0 ? ZERO : `n${p}`,
          created_at: new Date(1700000000000 + i * 1000).toISOString(),
          text: `m${i}`,
          content: [{ type: 'text', text: `m${i}` }],
          attachments: [],
          files: [],
        }))
        for (const o of order) {
          const i = o % list.length
          const j = (o >> 3) % list.length
          ;[list[i], list[j]] = [list[j], list[i]]
        }
        const r = await importTranscript(
          JSON.stringify([
            {
              uuid: 'c',
              name: 'c',
              created_at: '2023-11-14T00:00:00Z',
              updated_at: '2023-11-14T00:00:00Z',
              chat_messages: list,
            },
          ]),
        )
        expect(r.format).toBe('claude-ai')
        const s = r.sessions[0]
        valid(s)
        expect(shape(s.entries)).toEqual(rootedShape(parents, false))
      }),
      { numRuns: 200 },
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Unified JSON and OPA: written by our exporters from random trees, read back
// ---------------------------------------------------------------------------------------------

function randomSession(parents: number[]): SessionImport {
  const entries: SessionEntry[] = parents.map((p, i) => {
    const parent_id = i === 0 ? null : `e${Math.max(0, p)}`
    if (i % 7 === 3)
      return {
        id: `e${i}`,
        parent_id,
        timestamp: 1000 + i,
        revision: 0,
        kind: 'custom',
        custom_type: 'note',
        data: { i },
      }
    return {
      id: `e${i}`,
      parent_id,
      timestamp: 1000 + i,
      revision: 0,
      kind: 'message',
      message:
        i % 2
          ? {
              role: 'assistant',
              content: [{ type: 'text', text: `a${i}` }],
              stop_reason: 'end',
              model: 'm',
              provider: 'p',
              timestamp: 1000 + i,
            }
          : { role: 'user', content: [{ type: 'text', text: `u${i}` }], timestamp: 1000 + i },
    }
  })
  const leaf = entries.at(-1)!.id
  return {
    meta: {
      session_id: 's',
      title: 't',
      description: '',
      status: 'idle',
      kind: 'user',
      metadata: {},
      created_at: 1000,
      updated_at: 2000,
      message_count: entries.filter((e) => e.kind === 'message').length,
    },
    entries,
    active_leaf: leaf,
  }
}

describe('tree fidelity: unified JSON and OPA', () => {
  it('unified JSON keeps every fork of any tree; OPA (active path only) is one chain', async () => {
    await fc.assert(
      fc.asyncProperty(parentLinks(40), async (links) => {
        const s = randomSession(links)
        const back = (await importTranscript(exportUnified(s))).sessions[0]
        valid(back)
        expect(shape(back.entries)).toEqual(shape(s.entries))
        const opa = (await importTranscript(exportOpa(s))).sessions[0]
        valid(opa)
        expect(shape(opa.entries).forks).toBe(0)
        expect(shape(opa.entries).roots).toBe(1)
      }),
      { numRuns: 100 },
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Gemini CLI: the JSON-era record is one chain; the JSONL log forks where a rewind cut a tail
// and messages followed
// ---------------------------------------------------------------------------------------------

const geminiOps = fc.array(
  fc.oneof(
    fc.constantFrom('user', 'gemini', 'tools', 'info', 'update', 'set').map((k) => ({ k, back: 0 })),
    fc.nat({ max: 6 }).map((back) => ({ k: 'rewind', back })),
  ),
  { minLength: 1, maxLength: 30 },
)

describe('tree fidelity: Gemini CLI', () => {
  it('JSONL: forks exactly where a rewind left a tail and the conversation went on; noise changes nothing', async () => {
    let forked = 0
    await fc.assert(
      fc.asyncProperty(geminiOps, fc.boolean(), async (ops, jsonEra) => {
        const lines: unknown[] = [
          {
            sessionId: 'g',
            projectHash: 'h',
            startTime: '2026-05-01T00:00:00Z',
            lastUpdated: '2026-05-01T00:00:00Z',
            kind: 'main',
          },
        ]
        // The model: every appended message's parent is the last live one.
        const parents = new Map<string, string | null>()
        let current: string[] = []
        let n = 0
        const message = (k: string, id = `m${n++}`): Record<string, unknown> => ({
          id,
          timestamp: new Date(Date.UTC(2026, 4, 1) + n * 1000).toISOString(),
          type: k === 'user' ? 'user' : k === 'info' ? 'info' : 'gemini',
          content: k === 'user' ? [{ text: 'hi' }] : 'ok',
          ...(k === 'tools' && {
            toolCalls: [
              {
                id: `c${id}`,
                name: 'read_file',
                args: {},
                status: 'success',
                result: [
                  { functionResponse: { id: `c${id}`, name: 'read_file', response: { output: 'x' } } },
                ],
              },
            ],
          }),
        })
        for (const { k, back } of ops) {
          if (k === 'set') lines.push({ $set: { lastUpdated: '2026-05-01T01:00:00Z' } })
          else if (k === 'update') {
            // The live last message written again (its tool calls progressed): replaced in place.
            if (current.length) lines.push({ ...message('gemini', current.at(-1)), content: 'updated' })
          } else if (k === 'rewind') {
            if (jsonEra || !current.length) continue
            const at = Math.max(0, current.length - 1 - back)
            lines.push({ $rewindTo: current[at] })
            current = current.slice(0, at)
          } else {
            const m = message(k)
            lines.push(m)
            parents.set(m.id as string, current.at(-1) ?? null)
            current.push(m.id as string)
          }
        }
        const text = jsonEra
          ? JSON.stringify({
              ...(lines[0] as object),
              messages: lines
                .slice(1)
                .filter((l) => !('$set' in (l as object)))
                .filter(
                  (l, i, all) =>
                    all.findLastIndex((x) => (x as { id: string }).id === (l as { id: string }).id) === i,
                ),
            })
          : lines.map((l) => JSON.stringify(l)).join('\n')
        const r = await importTranscript(text, { format: 'gemini' })
        if (parents.size === 0) return
        const s = r.sessions[0]
        valid(s)
        expect(shape(s.entries)).toEqual(sourceShape(parents))
        expect(unansweredCalls(s)).toEqual([])
        if (sourceShape(parents).forks) forked++
      }),
      { numRuns: 200 },
    )
    // The runs did exercise forks, not only chains.
    expect(forked).toBeGreaterThan(10)
  })
})

// ---------------------------------------------------------------------------------------------
// OpenCode: parts of every kind inside messages; answers to an earlier prompt are branches
// ---------------------------------------------------------------------------------------------

const PARTS = ['text', 'reasoning', 'tool', 'step', 'patch', 'snapshot', 'agent', 'file'] as const

describe('tree fidelity: OpenCode', () => {
  it('an opencode export: the tree follows parentID, whatever parts the messages hold', async () => {
    let forked = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            role: fc.constantFrom('user', 'assistant', 'assistant-earlier'),
            parts: fc.array(fc.constantFrom(...PARTS), { minLength: 1, maxLength: 5 }),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        async (plan) => {
          const sid = 'ses_470a4a3c9ffeyELffpIzEVZF64'
          const T = Date.UTC(2026, 0, 1)
          const messages: unknown[] = []
          const prompts: string[] = []
          // The model: a user message follows the previous message; an answer follows the last message of its prompt's turn.
          const parents = new Map<string, string | null>()
          const lastOfTurn = new Map<string, string>()
          let prev: string | null = null
          plan.forEach((m, i) => {
            const id = `msg_${String(1000 + i).padStart(12, '0')}AbCdEfGhIjKlMn`
            let role = m.role
            if (role !== 'user' && !prompts.length) role = 'user'
            const answers =
              role === 'assistant'
                ? prompts.at(-1)
                : role === 'assistant-earlier'
                  ? prompts[i % prompts.length]
                  : undefined
            const info =
              role === 'user'
                ? { id, sessionID: sid, role: 'user', time: { created: T + i * 1000 } }
                : {
                    id,
                    sessionID: sid,
                    role: 'assistant',
                    parentID: answers,
                    modelID: 'm',
                    providerID: 'p',
                    time: { created: T + i * 1000 },
                    tokens: { input: 1, output: 1, reasoning: 0, cache: { read: 0, write: 0 } },
                    cost: 0,
                  }
            let k = 0
            const part = (o: Record<string, unknown>) => ({
              id: `prt_${String(1000 + i).padStart(12, '0')}${String(k++).padStart(14, '0')}`,
              sessionID: sid,
              messageID: id,
              ...o,
            })
            const parts =
              role === 'user'
                ? [part({ type: 'text', text: `prompt ${i}` })]
                : m.parts.flatMap((p) => {
                    if (p === 'step')
                      return [
                        part({ type: 'step-start', snapshot: 'abc' }),
                        part({ type: 'text', text: 'x' }),
                        part({
                          type: 'step-finish',
                          reason: 'stop',
                          tokens: { input: 1, output: 1, reasoning: 0, cache: { read: 0, write: 0 } },
                          cost: 0,
                        }),
                      ]
                    if (p === 'tool')
                      return [
                        part({
                          type: 'tool',
                          callID: `call_${i}_${k}`,
                          tool: 'bash',
                          state: {
                            status: 'completed',
                            input: { command: 'ls' },
                            output: 'ok',
                            title: 'ls',
                            metadata: {},
                            time: { start: T, end: T },
                          },
                        }),
                      ]
                    if (p === 'reasoning')
                      return [part({ type: 'reasoning', text: 'hm', time: { start: T, end: T } })]
                    if (p === 'patch') return [part({ type: 'patch', hash: 'abc', files: ['a.ts'] })]
                    if (p === 'snapshot') return [part({ type: 'snapshot', snapshot: 'abc' })]
                    if (p === 'agent') return [part({ type: 'agent', name: 'explore' })]
                    if (p === 'file')
                      return [
                        part({
                          type: 'file',
                          mime: 'text/plain',
                          filename: 'a.txt',
                          url: 'data:text/plain;base64,aGk=',
                        }),
                      ]
                    return [part({ type: 'text', text: 'answer' })]
                  })
            messages.push({ info, parts })
            if (role === 'user') {
              prompts.push(id)
              parents.set(id, prev)
              lastOfTurn.set(id, id)
            } else {
              parents.set(id, lastOfTurn.get(answers!) ?? prev)
              lastOfTurn.set(answers!, id)
            }
            prev = id
          })
          const r = await importTranscript(
            JSON.stringify({ info: { id: sid, title: 't', time: { created: T, updated: T } }, messages }),
            { format: 'opencode' },
          )
          const s = r.sessions[0]
          valid(s)
          expect(shape(s.entries)).toEqual(sourceShape(parents))
          expect(unansweredCalls(s)).toEqual([])
          if (sourceShape(parents).forks) forked++
        },
      ),
      { numRuns: 150 },
    )
    expect(forked).toBeGreaterThan(10)
  })
})
