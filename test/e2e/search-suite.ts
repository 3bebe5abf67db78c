import type { Locator, Page } from 'playwright'
import { describe, expect, it } from 'vitest'
import { ask, editFirstQuestion, picker, rows, rowText } from './chat-page.js'
import { screenshot, useExample, type ExampleSuite } from './harness.js'

// The Ctrl/Cmd+K palette of the two demos (react-chat, vue-chat): the same roles, labels, data
// attributes and classes in both, so one test drives either.

export const palette = (page: Page): Locator => page.getByRole('dialog', { name: 'Search chats' })
export const searchBox = (page: Page): Locator => page.getByRole('combobox', { name: 'Search chats' })
export const options = (page: Page): Locator => palette(page).getByRole('option')

/** The palette's hit for a question the user asked, by a word of it. */
const questionHit = (page: Page, word: string): Locator =>
  options(page)
    .filter({ hasText: /^You/ })
    .filter({ has: page.locator('mark', { hasText: word }) })

/** A row's classes once it shows, `not shown` until then (without waiting out Playwright's timeout). */
export const classOf = (row: Locator): Promise<string> =>
  row
    .getAttribute('class', { timeout: 1000 })
    .then((c) => c ?? '')
    .catch(() => 'not shown')

/** The row is inside the transcript's visible area. */
export const inView = (row: Locator): Promise<boolean> =>
  row.evaluate((el) => {
    const r = el.getBoundingClientRect()
    const s = el.closest('.transcript')!.getBoundingClientRect()
    return r.top >= s.top && r.bottom <= s.bottom
  })

/** "1 / 2" of a row's branch picker (its arrows drawn as icons in one app, as glyphs in the other). */
const versionOf = (row: Locator): Promise<string | null> => picker(row).locator('.branch-count').textContent()

/** The demo app's search palette, end to end; returns the suite for the app's own tests. */
export function searchSuite(example: 'react-chat' | 'vue-chat'): ExampleSuite {
  const app = useExample(example)
  describe(`${example}: searching every chat (Ctrl/Cmd+K)`, () => {
    it('finds a word only on the inactive branch and opens the chat on that branch, at the message', async () => {
      const page = await app.open()
      const chunks: string[] = []
      page.on('request', (r) => void (/SearchPalette-[^/]*\.js$/.test(r.url()) && chunks.push(r.url())))
      await ask(page, 'Tell me about tides')
      await editFirstQuestion(page, 'Tell me about volcanoes')
      expect(await versionOf(rows(page, 'user').first())).toBe('2 / 2')
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
      expect(await hit.locator('xpath=..').locator('.search-chat').textContent()).toBe('Tell me about tides')
      await screenshot(page, `${example.replace('-chat', '')}-search-palette`)

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
      expect(await versionOf(found)).toBe('1 / 2')
      expect(await rowText(rows(page, 'user').first())).toBe('Tell me about tides')
      expect(await inView(found)).toBe(true)
      await screenshot(page, `${example.replace('-chat', '')}-search-found`)

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
      expect(await versionOf(foundBack)).toBe('2 / 2')
      expect(await rowText(rows(page, 'user').first())).toBe('Tell me about volcanoes')
      // The chunk was fetched once: the palette's second opening reuses it (and the index).
      expect(chunks).toHaveLength(1)

      // The sidebar's button opens it too (mouse, touch); Escape closes it.
      await page.getByRole('button', { name: 'Search chats' }).click()
      await searchBox(page).waitFor()
      await searchBox(page).press('Escape')
      await palette(page).waitFor({ state: 'detached' })
    })
  })
  return app
}
