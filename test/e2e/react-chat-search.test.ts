import type { Locator, Page } from 'playwright'
import { describe, expect, it } from 'vitest'
import { ask, editFirstQuestion, picker, rows, rowText } from './chat-page.js'
import { screenshot, useExample } from './harness.js'
import { agentSession } from './agent-session.js'

const app = useExample('react-chat')
const palette = (page: Page): Locator => page.getByRole('dialog', { name: 'Search chats' })
const searchBox = (page: Page): Locator => page.getByRole('combobox', { name: 'Search chats' })
const options = (page: Page): Locator => palette(page).getByRole('option')

/** The palette's hit for a question the user asked, by a word of it. */
const questionHit = (page: Page, word: string): Locator =>
  options(page)
    .filter({ hasText: /^You/ })
    .filter({ has: page.locator('mark', { hasText: word }) })

/** A row's classes once it shows, `not shown` until then (without waiting out Playwright's timeout). */
const classOf = (row: Locator): Promise<string> =>
  row
    .getAttribute('class', { timeout: 1000 })
    .then((c) => c ?? '')
    .catch(() => 'not shown')

/** The row is inside the transcript's visible area. */
const inView = (row: Locator): Promise<boolean> =>
  row.evaluate((el) => {
    const r = el.getBoundingClientRect()
    const s = el.closest('.transcript')!.getBoundingClientRect()
    return r.top >= s.top && r.bottom <= s.bottom
  })

describe('react-chat: searching every chat (Ctrl/Cmd+K)', () => {
  it('finds a word only on the inactive branch and opens the chat on that branch, at the message', async () => {
    const page = await app.open()
    const chunks: string[] = []
    page.on('request', (r) => void (/SearchPalette-[^/]*\.js$/.test(r.url()) && chunks.push(r.url())))
    await ask(page, 'Tell me about tides')
    await editFirstQuestion(page, 'Tell me about volcanoes')
    expect(await picker(rows(page, 'user').first()).textContent()).toBe('2 / 2')
    // Nothing of search is fetched until it is asked for.
    expect(chunks).toEqual([])

    await page.keyboard.press('ControlOrMeta+k')
    await searchBox(page).waitFor()
    expect(chunks).toHaveLength(1)
    await searchBox(page).pressSequentially('tide')
    const hit = questionHit(page, 'tide')
    await hit.waitFor()
    // The word being typed matches as a prefix; the whole word is marked.
    expect(await hit.locator('mark').allTextContents()).toEqual(['tides'])
    expect(await hit.textContent()).toContain('other branch')
    // Grouped under its chat's title.
    expect(await hit.locator('xpath=..').getAttribute('role')).toBe('group')
    await screenshot(page, 'react-search-palette')

    // By keyboard: down to the hit, Enter.
    const entryId = (await hit.getAttribute('data-entry-id'))!
    const at = await options(page).evaluateAll(
      (els, id) => els.findIndex((el) => el.getAttribute('data-entry-id') === id),
      entryId,
    )
    for (let i = 0; i < at; i++) await searchBox(page).press('ArrowDown')
    expect(await hit.getAttribute('aria-selected')).toBe('true')
    await searchBox(page).press('Enter')

    await palette(page).waitFor({ state: 'detached' })
    const found = page.locator(`li.message[data-entry-id="${entryId}"]`)
    await expect.poll(() => classOf(found), { timeout: 10_000 }).toContain('message-found')
    expect(await found.getAttribute('aria-current')).toBe('true')
    expect(await rowText(found)).toBe('Tell me about tides')
    // The branch switched: the first question is the first version again, and it is the one shown.
    expect(await picker(found).textContent()).toBe('1 / 2')
    expect(await rowText(rows(page, 'user').first())).toBe('Tell me about tides')
    expect(await inView(found)).toBe(true)
    await screenshot(page, 'react-search-found')

    // By mouse, the other way: the question now off the path is found and opened likewise.
    await page.keyboard.press('ControlOrMeta+k')
    await searchBox(page).pressSequentially('volcano')
    const back = questionHit(page, 'volcano')
    await back.waitFor()
    expect(await back.locator('mark').allTextContents()).toEqual(['volcanoes'])
    expect(await back.textContent()).toContain('other branch')
    const backId = (await back.getAttribute('data-entry-id'))!
    await back.click()
    await palette(page).waitFor({ state: 'detached' })
    const foundBack = page.locator(`li.message[data-entry-id="${backId}"]`)
    await expect.poll(() => classOf(foundBack), { timeout: 10_000 }).toContain('message-found')
    expect(await picker(foundBack).textContent()).toBe('2 / 2')
    expect(await rowText(rows(page, 'user').first())).toBe('Tell me about volcanoes')
    // The chunk was fetched once: the palette's second opening reuses it (and the index).
    expect(chunks).toHaveLength(1)
  })

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
