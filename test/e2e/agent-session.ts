// Transcripts the e2e tests import into the demo apps.

/**
 * A Claude Code transcript of an agent session: 100 turns of a question, a run of 9 tool calls
 * with their results and an answer: 2,000 entries, 300 blocks. `special`, when given, replaces
 * the command of one call (turn `t`, call `c`): a word found nowhere else, for search.
 */
export function agentSession(special?: { t: number; c: number; command: string }): string {
  const lines: string[] = []
  let parent: string | null = null
  let n = 0
  const t0 = Date.UTC(2026, 0, 5)
  const common = {
    isSidechain: false,
    userType: 'external',
    cwd: '/work/agent',
    sessionId: 'agent-session',
    version: '2.1.20',
  }
  const push = (line: Record<string, unknown>): void => {
    const uuid = `x-${n}`
    lines.push(
      JSON.stringify({
        ...common,
        parentUuid: parent,
        uuid,
        timestamp: new Date(t0 + n * 1000).toISOString(),
        ...line,
      }),
    )
    parent = uuid
    n++
  }
  const assistant = (id: string, content: unknown[], stop: string) =>
    push({
      type: 'assistant',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: 'claude-opus-4-5',
        content,
        stop_reason: stop,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    })
  for (let t = 0; t < 100; t++) {
    push({ type: 'user', message: { role: 'user', content: `Task ${t}: list the files` } })
    for (let c = 0; c < 9; c++) {
      const id = `toolu_${t}_${c}`
      const command = special?.t === t && special.c === c ? special.command : `ls step-${t}-${c}`
      assistant(`msg_${t}_${c}`, [{ type: 'tool_use', id, name: 'Bash', input: { command } }], 'tool_use')
      push({
        type: 'user',
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: id, content: `output of step ${t}.${c}` }],
        },
      })
    }
    assistant(`msg_${t}_end`, [{ type: 'text', text: `Done with task ${t}.` }], 'end_turn')
  }
  return `${lines.join('\n')}\n`
}
