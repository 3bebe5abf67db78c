import { describe, expect, it } from 'vitest'
import {
  ask,
  chats,
  composer,
  editFirstQuestion,
  expectedReply,
  expectTokenByToken,
  midStream,
  newChatSeenByA,
  picker,
  regenerateFirstReply,
  rows,
  rowText,
  send,
  settled,
  twoTabs,
  watchStream,
} from './chat-page.js'
import { screenshot, useExample } from './harness.js'

const { open } = useExample('vue-chat')

describe('vue-chat, the smaller Vue demo', () => {
  it('streams a reply token by token and lists the chat in the sidebar', async () => {
    const page = await open()
    const stream = watchStream(page)
    await send(page, 'What is 12 * (3 + 4)?')
    await midStream(page, 30)
    // The layout fills the window: the composer sits at its foot.
    const box = (await composer(page).boundingBox())!
    expect(box.y + box.height).toBeGreaterThan(700)
    await screenshot(page, 'vue-streaming')
    await expectTokenByToken(stream)
    await settled(page, expectedReply('What is 12 * (3 + 4)?'))
    const reply = rows(page, 'assistant').last()
    expect(await reply.locator('[data-block="function_call"] code').textContent()).toBe('calc::eval')
    expect(await reply.locator('[data-block="function_result"]').textContent()).toContain('84')
    await expect
      .poll(() => chats(page).first().textContent())
      .toMatch(/^What is 12 \* \(3 \+ 4\)\?Done2 messages$/)
    // Text stays text here too.
    await ask(page, '<b>not bold</b>')
    expect(await rowText(rows(page, 'user').last())).toBe('<b>not bold</b>')
    expect(await rows(page, 'user').last().locator('b').count()).toBe(0)
  })

  it('edits and regenerates into branches and flips them with the picker', async () => {
    const page = await open()
    await ask(page, 'Tell me about tides')
    await editFirstQuestion(page, 'Tell me about volcanoes')
    expect(await picker(rows(page, 'user').first()).textContent()).toBe('‹2 / 2›')
    await picker(rows(page, 'user').first()).getByRole('button', { name: 'Previous version' }).click()
    await expect.poll(() => rowText(rows(page, 'user').first())).toBe('Tell me about tides')
    expect(await rowText(rows(page, 'assistant').first())).toBe(expectedReply('Tell me about tides'))

    await regenerateFirstReply(page, 'Tell me about tides', '‹2 / 2›')
    await screenshot(page, 'vue-branches')

    await page.reload()
    await expect
      .poll(() => rowText(rows(page, 'assistant').first()))
      .toBe(expectedReply('Tell me about tides', 1))
    expect(await picker(rows(page, 'user').first()).textContent()).toBe('‹1 / 2›')
  })

  it("shows two tabs each other's chats and messages live", async () => {
    const { a, b } = await twoTabs(open)
    await newChatSeenByA(a, b)
  })
})
