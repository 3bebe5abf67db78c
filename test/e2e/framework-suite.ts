import { describe, expect, it } from 'vitest'
import type { Locator, Page } from 'playwright'
import { composer, expectedReply } from './chat-page.js'
import { screenshot, useExample, type Example } from './harness.js'
import { startMockOpenAI } from './mock-openai.js'

// The framework examples (assistant-ui-chat, ai-sdk-chat) share their markup conventions
// (data-role rows, the same buttons and labels), so one suite drives both.

const rows = (page: Page, role: 'user' | 'assistant'): Locator => page.locator(`[data-role="${role}"]`)
const picker = (row: Locator): Locator => row.locator('[data-picker]')
const textOf = async (row: Locator): Promise<string> =>
  ((await row.textContent()) ?? '').replace(/\s+/g, ' ').trim()

async function send(page: Page, text: string): Promise<void> {
  await composer(page).fill(text)
  await composer(page).press('Enter')
}

/** Waits until no reply streams: the Send button is back. */
const idle = (page: Page): Promise<void> =>
  page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 20_000 })

export function frameworkSuite(example: Example): void {
  const suite = useExample(example)

  describe(`${example}: the framework's own components over Colloquy`, () => {
    it('streams the local model, edits into a branch the picker flips, and keeps the chosen branch across a reload', async () => {
      const page = await suite.open()
      await send(page, 'What is 12 * (3 + 4)?')
      await expect
        .poll(() => textOf(rows(page, 'assistant').last()), { timeout: 10_000 })
        .toContain('calc::eval')
      await idle(page)
      const reply = await textOf(rows(page, 'assistant').last())
      expect(reply).toContain('84')
      expect(reply).toContain(expectedReply('What is 12 * (3 + 4)?').split(' ').slice(0, 3).join(' '))
      await screenshot(page, `${example}-reply`)

      await rows(page, 'user').first().getByRole('button', { name: 'Edit' }).click()
      await page.getByRole('textbox', { name: 'Edit message' }).fill('Tell me about volcanoes')
      await page.getByRole('button', { name: 'Save & send' }).click()
      await expect.poll(() => textOf(rows(page, 'user').first())).toContain('Tell me about volcanoes')
      await idle(page)
      await expect.poll(() => picker(rows(page, 'user').first()).textContent()).toMatch(/2\s*\/\s*2/)
      await picker(rows(page, 'user').first()).getByRole('button', { name: 'Previous version' }).click()
      await expect.poll(() => textOf(rows(page, 'user').first())).toContain('What is 12 * (3 + 4)?')

      await page.reload()
      await composer(page).waitFor()
      await expect
        .poll(() => textOf(rows(page, 'user').first()), { timeout: 10_000 })
        .toContain('What is 12 * (3 + 4)?')
      await expect.poll(() => picker(rows(page, 'user').first()).textContent()).toMatch(/1\s*\/\s*2/)
      expect(await textOf(rows(page, 'assistant').last())).toContain('84')
    })

    it('a second tab shows the reply live; a reload mid-stream keeps what arrived and marks it interrupted', async () => {
      const page = await suite.open()
      await send(page, 'hello there')
      await expect.poll(() => rows(page, 'assistant').count(), { timeout: 10_000 }).toBe(1)
      await idle(page)
      // The open chat is in the URL once it exists.
      await expect.poll(() => page.url()).toMatch(/#s_/)
      const other = await suite.open(page.url())
      await expect.poll(() => rows(other, 'user').count(), { timeout: 10_000 }).toBe(1)

      await send(page, 'Show me a demo of everything you can do')
      // The other tab sees the reply grow and shows it as running (its Stop button).
      const lengths: number[] = []
      await expect
        .poll(
          async () => {
            lengths.push((await textOf(rows(other, 'assistant').last())).length)
            return new Set(lengths).size
          },
          { timeout: 10_000, interval: 50 },
        )
        .toBeGreaterThan(3)
      await other.getByRole('button', { name: 'Stop' }).waitFor()
      await screenshot(other, `${example}-second-tab`)

      const partial = (await textOf(rows(page, 'assistant').last())).length
      await page.reload()
      await composer(page).waitFor()
      await expect.poll(() => page.getByText(/Interrupted/).count(), { timeout: 10_000 }).toBeGreaterThan(0)
      const kept = await textOf(rows(page, 'assistant').last())
      expect(kept.length).toBeGreaterThanOrEqual(partial)
      expect(kept.length).toBeGreaterThan(0)
      // …and the other tab agrees: the reply stopped growing and is no longer running.
      await idle(other)
      await expect.poll(() => other.getByText(/Interrupted/).count(), { timeout: 10_000 }).toBeGreaterThan(0)
    })

    it('calls an OpenAI-compatible endpoint set in the UI, with the real request shape', async () => {
      const mock = await startMockOpenAI((prompt) => `You said: ${prompt}. Streamed by the mock.`)
      try {
        const page = await suite.open()
        await page.getByRole('textbox', { name: 'Endpoint URL' }).fill(mock.url)
        await page.getByLabel('API key').fill('sk-test')
        await page.getByRole('textbox', { name: 'Model name' }).fill('gpt-mock')
        await page.getByRole('button', { name: 'Save', exact: true }).click()
        await send(page, 'ping')
        await expect
          .poll(() => textOf(rows(page, 'assistant').last()), { timeout: 10_000 })
          .toContain('You said: ping. Streamed by the mock.')
        await idle(page)
        const req = mock.requests.find((r) => r.method === 'POST')!
        expect(req.path).toBe('/v1/chat/completions')
        expect(req.authorization).toBe('Bearer sk-test')
        expect(req.body).toMatchObject({
          model: 'gpt-mock',
          stream: true,
          messages: [{ role: 'user', content: 'ping' }],
        })
        // The reply was stored as it streamed: it is there after a reload.
        await page.reload()
        await composer(page).waitFor()
        await expect
          .poll(() => textOf(rows(page, 'assistant').last()), { timeout: 10_000 })
          .toContain('Streamed by the mock.')
      } finally {
        await mock.close()
      }
    })
  })
}
