import { describe, expect, it } from 'vitest'
import { rows } from './chat-page.js'
import { agentSession } from './agent-session.js'
import { classOf, inView, options, searchBox, searchSuite } from './search-suite.js'

// The palette as both demos have it (search-suite.ts), then what only this app has: imported
// agent sessions whose long runs are collapsed and paged.
const app = searchSuite('react-chat')

describe('react-chat: searching an imported agent session', () => {
  it('opens a long agent session at a step in a collapsed run on a page not read yet', async () => {
    const page = await app.open()
    await page.getByLabel('Import transcripts').setInputFiles({
      name: 'agent.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(agentSession({ t: 2, c: 3, command: 'ls quokka' })),
    })
    const collapsed = page.locator('li.run-collapsed')
    await expect.poll(() => collapsed.count(), { timeout: 30_000 }).toBeGreaterThan(0)
    // The step is in the third task's run: neither read (the newest 200 blocks are) nor shown.
    expect(await page.locator('li.message', { hasText: 'quokka' }).count()).toBe(0)
    await expect.poll(() => rows(page).last().textContent()).toContain('Done with task 99.')

    // Opened with the mouse this time: the sidebar's button.
    await page.getByRole('button', { name: 'Search chats' }).click()
    await searchBox(page).pressSequentially('quokka')
    const hit = options(page).filter({ has: page.locator('mark', { hasText: 'quokka' }) })
    await expect.poll(() => hit.count(), { timeout: 10_000 }).toBe(1)
    const entryId = (await hit.getAttribute('data-entry-id'))!
    await hit.click()
    const found = page.locator(`li.message[data-entry-id="${entryId}"]`)
    await expect.poll(() => classOf(found), { timeout: 10_000 }).toContain('message-found')
    expect(await found.textContent()).toContain('ls quokka')
    await expect.poll(() => inView(found)).toBe(true)
  })
})
