import { describe, expect, it } from 'vitest'
import { rows } from './chat-page.js'
import { screenshot, useExample } from './harness.js'

const app = useExample('react-chat')
const { open } = app

/**
 * A Claude Code transcript of an agent session: 100 turns of a question, a run of 9 tool calls
 * with their results and an answer: 2,000 entries, 300 blocks.
 */
function agentSession(): string {
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
      assistant(
        `msg_${t}_${c}`,
        [{ type: 'tool_use', id, name: 'Bash', input: { command: `ls step-${t}-${c}` } }],
        'tool_use',
      )
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

describe('react-chat on a long agent session', () => {
  it('a 2,000-entry agent session opens on its newest blocks with runs collapsed, shows a run in full, and pages back', async () => {
    const page = await open()
    await page.getByLabel('Import transcripts').setInputFiles({
      name: 'agent.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(agentSession()),
    })
    const collapsed = page.locator('li.run-collapsed')
    await expect.poll(() => collapsed.count(), { timeout: 30_000 }).toBeGreaterThan(0)
    // 200 blocks of 300 are read: 67 runs collapsed, each keeping its last call and result whole.
    const runs = await collapsed.count()
    expect(runs).toBeGreaterThanOrEqual(66)
    expect(runs).toBeLessThanOrEqual(67)
    expect(await collapsed.last().textContent()).toBe('16 earlier steps of this run · Show all')
    const before = await rows(page).count()
    // Far fewer rows than entries: every run shows 2 of its 18 entries.
    expect(before).toBeLessThan(400)
    expect(await rows(page).last().textContent()).toContain('Done with task 99.')
    await screenshot(page, 'react-agent-collapsed')

    // "Show all" reads the run with messagesRange and shows every step.
    await collapsed.last().getByRole('button').click()
    await expect.poll(() => rows(page).count()).toBe(before + 16)
    expect(await collapsed.count()).toBe(runs - 1)

    // Earlier blocks on request (or when the reader scrolls up to them).
    const earlier = page.getByRole('button', { name: /^Show earlier messages/ })
    expect(await earlier.textContent()).toMatch(/^Show earlier messages \([\d,]+ not shown\)$/)
    await earlier.click()
    await expect.poll(() => collapsed.count()).toBe(99)
    expect(await earlier.count()).toBe(0)
    expect(await rows(page).first().textContent()).toContain('Task 0: list the files')
  })
})
