import { describe, expect, it } from 'vitest'
import { rows } from './chat-page.js'
import { screenshot, useExample } from './harness.js'
import { agentSession } from './agent-session.js'

const app = useExample('react-chat')
const { open } = app

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
    // Clicked where it is: a click that scrolls it into view first would be the reader scrolling
    // up to it, which reads the earlier blocks by itself and takes the button away mid-click.
    await earlier.dispatchEvent('click')
    await expect.poll(() => collapsed.count()).toBe(99)
    expect(await earlier.count()).toBe(0)
    expect(await rows(page).first().textContent()).toContain('Task 0: list the files')
  })
})
