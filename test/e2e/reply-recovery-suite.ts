import { describe, expect, it } from 'vitest'
import type { Locator, Page } from 'playwright'
import { composer, expectedReply } from './chat-page.js'
import { useExample, type Example } from './harness.js'

// A reply outlives nothing but its own tab: the tab writing it closes mid-stream, and the tab
// left must show it ended (interrupted) at once and take a new message; Stop pressed in a tab
// that does not write the reply ends it. Every app, through its own UI.

const LONG = 'Tell me a long story'
// Prompts whose replies are short (36 and 41 tokens against 60 to 110 for most): they are
// waited for in full.
const AGAIN = 'What is 5 + 5?'
const FIRST = 'What is 7 * 8?'

/** How one app shows a reply's state: its Stop button, the rows, and its mark for an interrupted reply. */
interface AppUi {
  stop(page: Page): Locator
  send(page: Page): Locator
  assistant(page: Page): Locator
  /** The mark of an interrupted reply: the same on the message in every app (chat-kit's `replyEnd`). */
  interrupted(page: Page): Locator
}

const interrupted = (page: Page): Locator => page.locator('[data-reply-end="interrupted"]')
const kit: AppUi = {
  stop: (page) => page.getByRole('button', { name: 'Stop reply' }),
  send: (page) => page.getByRole('button', { name: 'Send message' }),
  assistant: (page) => page.locator('li.message[data-role="assistant"]'),
  interrupted,
}
const framework: AppUi = {
  stop: (page) => page.getByRole('button', { name: 'Stop', exact: true }),
  send: (page) => page.getByRole('button', { name: 'Send', exact: true }),
  assistant: (page) => page.locator('[data-role="assistant"]'),
  interrupted,
}

const apps: Record<Example, AppUi> = {
  'react-chat': kit,
  'vue-chat': kit,
  'assistant-ui-chat': framework,
  'ai-sdk-chat': framework,
}

const textOf = async (row: Locator): Promise<string> =>
  ((await row.textContent()) ?? '').replace(/\s+/g, ' ').trim()

export function replyRecoverySuite(example: Example): void {
  const suite = useExample(example)
  const ui = apps[example]

  async function send(page: Page, text: string): Promise<void> {
    await composer(page).fill(text)
    await composer(page).press('Enter')
  }

  /** Waits until no reply streams in `page`: Send is back, Stop gone. */
  async function idle(page: Page): Promise<void> {
    await ui.send(page).waitFor({ timeout: 20_000 })
    expect(await ui.stop(page).count()).toBe(0)
  }

  /** Two tabs on one chat; A is writing a long reply that B sees streaming (B shows Stop). */
  async function replyingInA(): Promise<{ a: Page; b: Page }> {
    const a = await suite.open()
    await send(a, FIRST)
    await expect.poll(() => ui.assistant(a).count(), { timeout: 10_000 }).toBe(1)
    await idle(a)
    await expect.poll(() => a.url()).toMatch(/#.*s_/)
    const b = await suite.open(a.url())
    await expect.poll(() => ui.assistant(b).count(), { timeout: 10_000 }).toBe(1)
    await send(a, LONG)
    await expect.poll(() => ui.assistant(b).count(), { timeout: 10_000 }).toBe(2)
    await expect
      .poll(async () => (await textOf(ui.assistant(b).last())).length, { timeout: 10_000 })
      .toBeGreaterThan(20)
    await ui.stop(b).waitFor()
    return { a, b }
  }

  /** `page` takes a new message and streams its whole reply (a short one: a sum). */
  async function sendsAgain(page: Page): Promise<void> {
    const before = await ui.assistant(page).count()
    await send(page, AGAIN)
    await expect.poll(() => ui.assistant(page).count(), { timeout: 10_000 }).toBe(before + 1)
    await expect
      .poll(() => textOf(ui.assistant(page).last()), { timeout: 20_000 })
      .toContain(expectedReply(AGAIN).replace(/\s+/g, ' ').slice(0, 40))
    await idle(page)
  }

  describe(`${example}: replies across tabs`, () => {
    for (const runBeforeUnload of [false, true]) {
      it(`the tab writing a reply closes mid-stream (runBeforeUnload: ${runBeforeUnload}): the other tab shows it interrupted at once and sends again`, async () => {
        const { a, b } = await replyingInA()
        const partial = (await textOf(ui.assistant(b).last())).length
        await a.close({ runBeforeUnload })
        await expect.poll(() => ui.interrupted(b).count(), { timeout: 5_000 }).toBeGreaterThan(0)
        await idle(b)
        // What had arrived stays.
        expect((await textOf(ui.assistant(b).last())).length).toBeGreaterThanOrEqual(partial)
        await sendsAgain(b)
      })
    }

    it('Stop in a tab that is not writing the reply ends it in both tabs', async () => {
      const { a, b } = await replyingInA()
      await ui.stop(b).click()
      await idle(b)
      await idle(a)
      // Both show the same cut-off reply (each tab's view of the last write may land a moment
      // after its Send button is back, so both are read until they agree).
      const shown = async (): Promise<[string, string]> => [
        await textOf(ui.assistant(a).last()),
        await textOf(ui.assistant(b).last()),
      ]
      await expect.poll(async () => new Set(await shown()).size, { timeout: 10_000 }).toBe(1)
      const [stopped] = await shown()
      expect(stopped.length).toBeLessThan(expectedReply(LONG).length)
      expect(await ui.interrupted(b).count()).toBe(0)
      await sendsAgain(b)
      await sendsAgain(a)
    })
  })
}
