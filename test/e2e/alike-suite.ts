import { readFileSync } from 'node:fs'
import type { Locator, Page } from 'playwright'
import { describe, expect, it } from 'vitest'
import { EXPORTERS } from '../../packages/formats/src/index.js'
import { composer, expectedReply, settled } from './chat-page.js'
import { screenshot, useExample, type Example } from './harness.js'

// What the four example apps must do alike (issue 30, items 2–6): how a reply ended, following
// the newest message, attach / paste / fork / export, the chat list's count and fork mark. Each
// app names its controls its own way; `Driver` says how, and the tests are the same for all four.

interface Driver {
  /** A message row of `role`. */
  row: string
  /** The scrolling element of the transcript. */
  scroller: string
  stop: string
  fork: string
  /** A chat in the chat list. */
  chat: string
  /** Opens the export menu of the open chat. */
  openExport(page: Page): Promise<Locator>
  /** Resolves once no reply streams. */
  idle(page: Page): Promise<void>
  /** Starts a new, empty chat. */
  newChat(page: Page): Promise<void>
}

const demo = (example: 'react-chat' | 'vue-chat'): Driver => ({
  row: 'li.message',
  scroller: '.transcript',
  stop: 'Stop reply',
  fork: 'Fork from here',
  chat: 'nav[aria-label="Chats"] li',
  async openExport(page) {
    if (example === 'vue-chat') {
      await page.locator('.topbar').getByRole('button', { name: 'Export chat' }).click()
      return page.locator('.topbar').getByRole('menu', { name: 'Export chat' })
    }
    const row = page.locator('nav[aria-label="Chats"] li.open')
    await row.hover()
    await row.getByRole('button', { name: 'Export chat' }).click()
    return row.getByRole('menu', { name: 'Export chat' })
  },
  async idle(page) {
    await expect
      .poll(() => page.getByRole('list', { name: 'Messages' }).getAttribute('aria-busy'), { timeout: 20_000 })
      .toBe('false')
  },
  async newChat(page) {
    await page.getByRole('button', { name: /New chat$/ }).click()
    await composer(page).waitFor()
  },
})

const framework = (): Driver => ({
  row: '.message',
  scroller: '.viewport',
  stop: 'Stop',
  fork: 'Fork',
  chat: '[data-chat]',
  async openExport(page) {
    const row = page
      .locator('[data-chat][data-active], [data-chat][aria-current="true"], [data-chat][data-active="true"]')
      .first()
    await row.getByRole('button', { name: 'Export chat' }).click()
    return row.getByRole('menu', { name: 'Export chat' })
  },
  async idle(page) {
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 20_000 })
  },
  async newChat(page) {
    await page.getByRole('button', { name: /New chat$/ }).click()
  },
})

const drivers: Record<Example, Driver> = {
  'react-chat': demo('react-chat'),
  'vue-chat': demo('vue-chat'),
  'assistant-ui-chat': framework(),
  'ai-sdk-chat': framework(),
}

// A real 2x2 PNG, so the <img> decodes.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=='
const LONG = 'Show me a demo of everything you can do'

async function send(page: Page, text: string): Promise<void> {
  await composer(page).fill(text)
  await composer(page).press('Enter')
}

/** How far the transcript is from its bottom, in pixels. */
const fromBottom = (page: Page, d: Driver): Promise<number> =>
  page.locator(d.scroller).evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)

export function alikeSuite(example: Example): void {
  const suite = useExample(example)
  const d = drivers[example]
  const rows = (page: Page, role: 'user' | 'assistant'): Locator =>
    page.locator(`${d.row}[data-role="${role}"]`)
  const marks = (page: Page): Locator => page.locator('[data-reply-end]')

  /** Sends `text` and waits for its reply to finish. */
  async function ask(page: Page, text: string): Promise<void> {
    const before = await rows(page, 'assistant').count()
    await send(page, text)
    await expect.poll(() => rows(page, 'assistant').count(), { timeout: 10_000 }).toBe(before + 1)
    await page
      .getByRole('button', { name: d.stop, exact: true })
      .waitFor({ state: 'detached', timeout: 20_000 })
      .catch(() => {})
    await d.idle(page)
  }

  describe(`${example}: alike with the other three apps`, () => {
    it('marks a stopped reply "Stopped" and a reply cut off by its closed tab "Interrupted", on the message, in the same words in every tab', async () => {
      const page = await suite.open()
      await send(page, LONG)
      await page.getByRole('button', { name: d.stop, exact: true }).click()
      await d.idle(page)
      const last = rows(page, 'assistant').last()
      await expect
        .poll(() => last.locator('[data-reply-end]').textContent(), { timeout: 10_000 })
        .toBe('Stopped')
      expect(await last.locator('[data-reply-end]').getAttribute('data-reply-end')).toBe('stopped')

      // A second tab on the chat; the first one asks again and is reloaded mid-reply.
      await expect.poll(() => page.url()).toMatch(/#.*s_/)
      const other = await suite.open(page.url())
      await expect.poll(() => rows(other, 'assistant').count(), { timeout: 10_000 }).toBe(1)
      await send(page, LONG)
      await other.getByRole('button', { name: d.stop, exact: true }).waitFor({ timeout: 10_000 })
      await page.reload()
      await composer(page).waitFor()
      for (const p of [page, other]) {
        const mark = rows(p, 'assistant').last().locator('[data-reply-end]')
        await expect.poll(() => mark.textContent().catch(() => null), { timeout: 15_000 }).toBe('Interrupted')
        // Each reply keeps how it ended: the stopped one is still marked beside the interrupted one.
        await expect
          .poll(() => marks(p).allTextContents(), { timeout: 10_000 })
          .toEqual(['Stopped', 'Interrupted'])
        // No other vocabulary: no "Error", no raw reason.
        expect(await p.getByText(/^Error$|interrupted: the tab/).count()).toBe(0)
      }
      await screenshot(other, `${example}-reply-ends`)
      // …and the chat takes a new message.
      await ask(other, 'hello again')
      // …and the earlier replies keep their marks after the next one ends (they are on the messages, not the session).
      expect(await rows(other, 'assistant').last().locator('[data-reply-end]').count()).toBe(0)
      expect(await marks(other).allTextContents()).toEqual(['Stopped', 'Interrupted'])
    })

    it('opens a chat at its newest message, follows new messages at the bottom, and leaves the scroll alone once the reader scrolled up', async () => {
      const page = await suite.open()
      // A short window, so that one long reply (thinking, two tool calls, a picture) is taller
      // than it; the replies after it can be short (any reply is taller than the 4 px allowed).
      await page.setViewportSize({ width: 1280, height: 400 })
      await ask(page, LONG)
      // Taller than the window, and following: the newest message is in view.
      await expect
        .poll(() => page.locator(d.scroller).evaluate((el) => el.scrollHeight > el.clientHeight * 1.5))
        .toBe(true)
      await expect.poll(() => fromBottom(page, d)).toBeLessThan(4)

      await page.reload()
      await composer(page).waitFor()
      await expect.poll(() => rows(page, 'assistant').count(), { timeout: 10_000 }).toBe(1)
      await expect.poll(() => fromBottom(page, d), { timeout: 10_000 }).toBeLessThan(4)

      // A message written in another tab streams in below the fold of a reader who scrolled up.
      const other = await suite.open(page.url())
      await expect.poll(() => rows(other, 'assistant').count(), { timeout: 10_000 }).toBe(1)
      // The reader looks at the first tab (a tab in the background does not lay out).
      await page.bringToFront()
      await page.locator(d.scroller).evaluate((el) => el.scrollTo({ top: 0 }))
      await expect.poll(() => page.locator(d.scroller).evaluate((el) => el.scrollTop)).toBe(0)
      await ask(other, 'And 3 * 3?')
      await expect.poll(() => rows(page, 'assistant').count(), { timeout: 10_000 }).toBe(2)
      await d.idle(page)
      expect(await page.locator(d.scroller).evaluate((el) => el.scrollTop)).toBe(0)

      // Back at the bottom, it follows again.
      await page.locator(d.scroller).evaluate((el) => el.scrollTo({ top: el.scrollHeight }))
      await ask(other, 'And 8 / 2?')
      await expect.poll(() => rows(page, 'assistant').count(), { timeout: 10_000 }).toBe(3)
      await d.idle(page)
      await expect.poll(() => fromBottom(page, d)).toBeLessThan(4)

      // The transcript area itself shrinks (a smaller window), its content the same: the newest
      // message stays in view.
      const size = page.viewportSize()!
      const height = await page.locator(d.scroller).evaluate((el) => el.clientHeight)
      await page.setViewportSize({ width: size.width, height: size.height - 200 })
      await expect
        .poll(() => page.locator(d.scroller).evaluate((el) => el.clientHeight))
        .toBeLessThan(height - 100)
      await expect.poll(() => fromBottom(page, d)).toBeLessThan(4)
      await page.setViewportSize(size)
    })

    it('attaches a picked file and a pasted image, forks, and exports in every format @colloquy/formats writes', async () => {
      const page = await suite.open()
      await ask(page, 'Tell me about tides')
      const chips = page.getByRole('list', { name: 'Attachments' }).locator('li')
      // Pasted: an image from the clipboard.
      await composer(page).evaluate((el, b64) => {
        const data = new DataTransfer()
        data.items.add(
          new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], 'shot.png', { type: 'image/png' }),
        )
        el.dispatchEvent(
          new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }),
        )
      }, PNG)
      await expect.poll(() => chips.count()).toBe(1)
      // Picked: the attach button's file chooser.
      const [chooser] = await Promise.all([
        page.waitForEvent('filechooser'),
        page
          .getByRole('button', { name: 'Attach files' })
          .or(page.getByLabel('Attach files'))
          .first()
          .click(),
      ])
      await chooser.setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('some notes') })
      await expect.poll(() => chips.count()).toBe(2)
      await screenshot(page, `${example}-attachments`)
      await send(page, 'what is in these?')
      const sent = rows(page, 'user').last()
      await expect
        .poll(
          () =>
            sent
              .locator('img')
              .evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)
              .catch(() => 0),
          { timeout: 10_000 },
        )
        .toBe(2)
      await expect.poll(() => sent.textContent()).toContain('notes.txt')
      await d.idle(page)
      expect(await chips.count()).toBe(0)
      // Stored: both are there after a reload.
      await page.reload()
      await composer(page).waitFor()
      await expect
        .poll(
          () =>
            rows(page, 'user')
              .last()
              .locator('img')
              .evaluate((img: HTMLImageElement) => img.naturalWidth)
              .catch(() => 0),
          { timeout: 10_000 },
        )
        .toBe(2)
      expect(await rows(page, 'user').last().textContent()).toContain('notes.txt')

      // Export: one item per exporter of the package, and the file is what it writes.
      const menu = await d.openExport(page)
      await expect
        .poll(() => menu.getByRole('menuitem').allTextContents())
        .toEqual(EXPORTERS.map((e) => `Export as ${e.label}`))
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        menu.getByRole('menuitem', { name: 'Export as ChatGPT JSON' }).click(),
      ])
      expect(download.suggestedFilename()).toBe('Tell me about tides.chatgpt.json')
      const exported = JSON.parse(readFileSync((await download.path())!, 'utf8')) as { title: string }[]
      expect(exported[0].title).toBe('Tell me about tides')

      // Fork at the first reply: a new chat with the path up to it, marked as a fork in the list.
      const source = page.url()
      await rows(page, 'assistant').first().getByRole('button', { name: d.fork, exact: true }).click()
      await expect.poll(() => page.url(), { timeout: 10_000 }).not.toBe(source)
      await expect.poll(() => rows(page, 'assistant').count(), { timeout: 10_000 }).toBe(1)
      expect(await rows(page, 'user').count()).toBe(1)
      const forks = page.locator(d.chat).filter({ has: page.locator('.fork-badge') })
      await expect.poll(() => forks.count()).toBe(1)
      expect(await forks.textContent()).toContain('Tell me about tides (fork)')
    })

    if (example === 'assistant-ui-chat' || example === 'ai-sdk-chat') {
      it('marks a reply whose model call failed "Failed", the reason as its tooltip', async () => {
        const page = await suite.open()
        // An endpoint nothing listens on: the request fails.
        await page.getByRole('textbox', { name: 'Endpoint URL' }).fill('http://127.0.0.1:9/v1')
        await page.getByRole('button', { name: 'Save', exact: true }).click()
        await send(page, 'ping')
        // On the reply (assistant-ui), or beside the chat when the request failed before the AI
        // SDK made a reply message: the same mark either way.
        const mark = page.locator('[data-reply-end]').last()
        await expect
          .poll(() => mark.textContent({ timeout: 500 }).catch(() => null), { timeout: 15_000 })
          .toBe('Failed')
        expect(await mark.getAttribute('data-reply-end')).toBe('failed')
        expect((await mark.getAttribute('title'))?.length).toBeGreaterThan(0)
        expect(await page.getByText(/^Error$|^Interrupted/).count()).toBe(0)
      })
    }

    if (example === 'react-chat' || example === 'vue-chat') {
      it("counts the messages the chat shows (its active path), and a fork's mark survives a long title's ellipsis", async () => {
        const page = await suite.open()
        // Prompts with short replies (37 to 56 tokens), each waited for in full.
        const title = 'Tell me about the tides of the North Sea and the strong winter storms there'
        await ask(page, title)
        await ask(page, 'And 2 + 2?')
        // An edit and a regeneration: six entries more, two branches; the chat shows four messages.
        await rows(page, 'user').last().getByRole('button', { name: 'Edit message' }).click()
        await page.getByRole('textbox', { name: 'Edit message' }).fill('And 8 / 2?')
        await page.getByRole('button', { name: 'Save & send' }).click()
        await settled(page, expectedReply('And 8 / 2?'))
        await rows(page, 'assistant').last().getByRole('button', { name: 'Regenerate reply' }).click()
        await settled(page, expectedReply('And 8 / 2?', 1))
        await expect.poll(() => rows(page, 'assistant').count()).toBe(2)
        const open = page.locator(`${d.chat}.open`)
        await expect.poll(() => open.locator('.count').textContent()).toBe('4 messages')

        await rows(page, 'assistant').first().getByRole('button', { name: d.fork, exact: true }).click()
        await expect.poll(() => page.locator(d.chat).count()).toBe(2)
        await expect.poll(() => open.locator('.count').textContent()).toBe('2 messages')
        const titleBox = open.locator('.session-title')
        // The title is cut by the ellipsis…
        expect(await titleBox.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true)
        // …and the fork's mark is shown whole, inside the row.
        const badge = (await open.locator('.fork-badge').boundingBox())!
        const row = (await open.boundingBox())!
        expect(badge.width).toBeGreaterThan(10)
        expect(badge.x + badge.width).toBeLessThanOrEqual(row.x + row.width)
        expect(await open.locator('.fork-badge').textContent()).toBe('fork')
        // The source has no mark.
        expect(await page.locator(`${d.chat}:not(.open) .fork-badge`).count()).toBe(0)
        await screenshot(page, `${example === 'react-chat' ? 'react' : 'vue'}-sidebar-fork`)
      })
    }
  })
}
