import type { Page } from 'playwright'
import { describe, expect, it } from 'vitest'
import {
  ask,
  chats,
  composer,
  editFirstQuestion,
  expectedReply,
  expectTokenByToken,
  midStream,
  newChat,
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
import { screenshot, serve, useExample } from './harness.js'

const app = useExample('react-chat')
const { open } = app
const topStatus = (page: Page) => page.locator('.topbar .status')

describe('react-chat, the demo PWA', () => {
  it('sends a message and streams the reply token by token, then shows it done', async () => {
    const page = await open()
    await screenshot(page, 'react-welcome')
    const stream = watchStream(page)
    await send(page, 'Why is the sky blue?')
    // Mid-stream: the reply is partly there and the chat says it is replying.
    await midStream(page, 40)
    await expect.poll(() => topStatus(page).textContent()).toBe('Replying')
    await screenshot(page, 'react-streaming')
    await expectTokenByToken(stream)
    await settled(page, expectedReply('Why is the sky blue?'))
    expect(await topStatus(page).textContent()).toBe('Done')
    // The sidebar names the chat after the question and counts both messages.
    await expect.poll(() => chats(page).first().textContent()).toMatch(/^Why is the sky blue\?Done2 messages/)
    expect(new URL(page.url()).hash).toMatch(/^#\/c\/s_/)
  })

  it('renders every block type, and message text only ever as text', async () => {
    const page = await open()
    // Its reply tells the time (clock::now), so its text is not known in advance.
    await ask(page, 'Show me a demo of everything you can do', null)
    const reply = rows(page, 'assistant').last()
    await expect.poll(() => reply.locator('details.thinking').count()).toBe(1)
    const tools = reply.locator('[data-block="function_call"]')
    expect(await tools.count()).toBe(2)
    expect(await tools.nth(0).locator('code').textContent()).toBe('calc::eval')
    expect(await tools.nth(0).locator('[data-block="function_result"]').textContent()).toContain('84')
    expect(await tools.nth(1).locator('code').textContent()).toBe('clock::now')
    expect(await reply.locator('[data-block="image"] img').getAttribute('src')).toMatch(
      /^data:image\/svg\+xml;base64,/,
    )
    expect(
      await reply
        .locator('[data-block="image"] img')
        .evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth),
    ).toBe(320)
    expect(await rowText(reply)).toContain('(17 + 25) * 2 = 84')
    await reply.locator('details.thinking summary').click()
    expect(await reply.locator('details.thinking .text').isVisible()).toBe(true)
    await page.setViewportSize({ width: 1280, height: 1200 })
    await screenshot(page, 'react-blocks')

    const markup = '<img src=x onerror="window.__pwned=1"><b>bold</b> & <script>window.__pwned=2</script>'
    await ask(page, markup)
    const question = rows(page, 'user').last()
    expect(await rowText(question)).toBe(markup)
    expect(await question.locator('b, img, script').count()).toBe(0)
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined()
  })

  it('edits a question into a sibling branch, flips the picker, regenerates a reply', async () => {
    const page = await open()
    await ask(page, 'Tell me about tides')
    await editFirstQuestion(page, 'Tell me about volcanoes')
    const question = rows(page, 'user').first()
    expect(await rowText(question)).toBe('Tell me about volcanoes')
    expect(await picker(question).textContent()).toBe('2 / 2')
    expect(await rows(page).count()).toBe(2)

    // Back to the first version: its own reply comes back with it.
    await picker(question).getByRole('button', { name: 'Previous version' }).click()
    await expect.poll(() => rowText(rows(page, 'user').first())).toBe('Tell me about tides')
    expect(await picker(rows(page, 'user').first()).textContent()).toBe('1 / 2')
    expect(await rowText(rows(page, 'assistant').first())).toBe(expectedReply('Tell me about tides'))

    // Regenerate: a second reply beside the first, shown at once, with its own picker.
    await regenerateFirstReply(page, 'Tell me about tides', '2 / 2')
    expect(expectedReply('Tell me about tides', 1)).not.toBe(expectedReply('Tell me about tides'))
    await rows(page, 'assistant').first().hover()
    await screenshot(page, 'react-branches')
    await picker(rows(page, 'assistant').first()).getByRole('button', { name: 'Previous version' }).click()
    await expect
      .poll(() => rowText(rows(page, 'assistant').first()))
      .toBe(expectedReply('Tell me about tides'))

    // The chosen branches survive a reload.
    await page.reload()
    await expect
      .poll(() => rowText(rows(page, 'assistant').first()))
      .toBe(expectedReply('Tell me about tides'))
    expect(await picker(rows(page, 'user').first()).textContent()).toBe('1 / 2')
    expect(await picker(rows(page, 'assistant').first()).textContent()).toBe('1 / 2')
  })

  it('forks a message into a new chat that keeps the path up to it', async () => {
    const page = await open()
    await ask(page, 'Plan a picnic')
    await ask(page, 'Add a dessert')
    const source = page.url()
    await rows(page, 'assistant').first().getByRole('button', { name: 'Fork from here' }).click()
    await expect.poll(() => page.url()).not.toBe(source)
    await expect.poll(() => page.locator('.topbar h1').textContent()).toBe('Plan a picnic (fork)')
    expect(await rows(page).count()).toBe(2)
    expect(await rowText(rows(page, 'assistant').first())).toBe(expectedReply('Plan a picnic'))
    expect(await chats(page).count()).toBe(2)
    // The fork goes on by itself; the source chat is untouched.
    await ask(page, 'Make it vegan')
    await screenshot(page, 'react-fork')
    await page.getByRole('button', { name: /^forked from Plan a picnic$/ }).click()
    await expect.poll(() => page.url()).toBe(source)
    // The fork shows four rows too: wait for the source's own transcript, not for a count.
    await expect.poll(() => rowText(rows(page, 'user').last())).toBe('Add a dessert')
    expect(await rows(page).count()).toBe(4)
  })

  it('keeps everything across a reload: chats, titles, transcript, the open chat', async () => {
    const page = await open()
    await ask(page, 'What is 12 * (3 + 4)?')
    await newChat(page)
    await ask(page, 'Draw a lighthouse at dusk')
    const url = page.url()
    await page.reload()
    expect(page.url()).toBe(url)
    await expect.poll(() => chats(page).count()).toBe(2)
    // Most recently changed first.
    expect(await chats(page).locator('.session-title').allTextContents()).toEqual([
      'Draw a lighthouse at dusk',
      'What is 12 * (3 + 4)?',
    ])
    await expect
      .poll(() => rowText(rows(page, 'assistant').last()))
      .toBe(expectedReply('Draw a lighthouse at dusk'))
    expect(await rows(page, 'assistant').last().locator('[data-block="image"] img').count()).toBe(1)
  })

  it('renames, reorders live and deletes chats in the sidebar', async () => {
    const page = await open()
    await ask(page, 'first chat')
    const first = page.url()
    await newChat(page)
    await ask(page, 'second chat')
    expect(await chats(page).locator('.session-title').allTextContents()).toEqual([
      'second chat',
      'first chat',
    ])
    // A new message moves its chat to the top.
    await page.goto(first)
    await expect.poll(() => page.locator('.topbar h1').textContent()).toBe('first chat')
    await ask(page, 'back to the first')
    await expect
      .poll(() => chats(page).locator('.session-title').allTextContents())
      .toEqual(['first chat', 'second chat'])

    await chats(page).first().hover()
    await chats(page).first().getByRole('button', { name: 'Rename chat' }).click()
    await page.getByRole('textbox', { name: 'Chat title' }).fill('Renamed')
    await page.getByRole('textbox', { name: 'Chat title' }).press('Enter')
    await expect.poll(() => chats(page).first().locator('.session-title').textContent()).toBe('Renamed')
    expect(await page.locator('.topbar h1').textContent()).toBe('Renamed')
    await screenshot(page, 'react-sidebar')

    await chats(page).first().getByRole('button', { name: 'Delete chat' }).click()
    await chats(page).first().getByRole('button', { name: 'Delete', exact: true }).click()
    await expect.poll(() => chats(page).locator('.session-title').allTextContents()).toEqual(['second chat'])
    expect(new URL(page.url()).hash).toBe('')
  })

  it("shows two tabs each other's messages live", async () => {
    const { a, b } = await twoTabs(open)
    expect(await rowText(rows(b, 'user').last())).toBe('Tab A asks again')

    // And the other way round, including the sidebar.
    await ask(b, 'Tab B answers')
    await expect.poll(() => rowText(rows(a, 'assistant').last())).toBe(expectedReply('Tab B answers'))
    await newChatSeenByA(a, b)
    // A transcript longer than the window scrolls inside itself: the composer stays in view.
    const box = (await composer(a).boundingBox())!
    expect(box.y + box.height).toBeLessThanOrEqual(800)
    expect(await a.evaluate(() => window.scrollY)).toBe(0)
    await screenshot(a, 'react-two-tabs')
  })

  it('stops a reply from another tab, and marks one cut off by a closed tab as interrupted', async () => {
    const a = await open()
    await ask(a, 'Hello')
    const b = await open(a.url())
    // B presses Stop on the reply A is writing.
    await send(a, 'Tell me a long story')
    await midStream(b, 20)
    await b.getByRole('button', { name: 'Stop reply' }).click()
    await settled(a)
    expect((await rowText(rows(a, 'assistant').last())).length).toBeLessThan(
      expectedReply('Tell me a long story').length,
    )
    await expect.poll(() => topStatus(b).textContent()).toBe('Stopped')
    expect(await rows(b, 'assistant').last().locator('[data-reply-end]').textContent()).toBe('Stopped')

    // A closes while writing: the next tab to open finds the reply orphaned and says so.
    await send(a, 'Another long story')
    await midStream(b, 20)
    await b.close()
    await a.close({ runBeforeUnload: false })
    const c = await open(app.served.url + new URL(a.url()).hash)
    await expect.poll(() => topStatus(c).textContent()).toBe('Interrupted')
    expect(await rows(c, 'assistant').last().locator('[data-reply-end]').textContent()).toBe('Interrupted')
    expect((await rowText(rows(c, 'assistant').last())).length).toBeGreaterThan(20)
  })

  it('on a phone-sized screen the chat list slides over the chat', async () => {
    const page = await open()
    await ask(page, 'Hi from a phone')
    await page.setViewportSize({ width: 390, height: 844 })
    const sidebar = page.locator('.sidebar')
    // How much of the chat list is on screen: all of it (288 px) or none, once it has slid.
    const shown = async (): Promise<number> => {
      const box = await sidebar.boundingBox()
      return box ? Math.round(Math.max(0, box.x + box.width)) : 0
    }
    await expect.poll(shown).toBe(0)
    await page.getByRole('button', { name: 'Show chats' }).click()
    await expect.poll(shown).toBe(288)
    await screenshot(page, 'react-phone-chats')
    await chats(page).first().locator('a').click()
    await expect.poll(shown).toBe(0)
    await screenshot(page, 'react-phone')
  })

  it('settings keep a server URL and token; the badge says where data lives', async () => {
    const page = await open()
    expect(await page.locator('.sync-badge').textContent()).toBe('Local only')
    await page.getByRole('button', { name: 'Settings', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Sync settings' })
    await dialog.getByRole('textbox', { name: 'Server URL' }).fill('not a url')
    expect(await dialog.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true)
    await dialog.getByRole('textbox', { name: 'Server URL' }).fill('http://127.0.0.1:8787')
    await dialog.getByLabel('Token').fill('secret-token')
    await screenshot(page, 'react-settings')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.reload()
    await page.getByRole('button', { name: 'Settings', exact: true }).click()
    expect(await page.getByRole('textbox', { name: 'Server URL' }).inputValue()).toBe('http://127.0.0.1:8787')
    expect(await page.getByLabel('Token').inputValue()).toBe('secret-token')
    // Sync can be turned off again: the badge goes back to local, and it stays off after a reload.
    await page.getByRole('button', { name: 'Turn sync off' }).click()
    await page.getByRole('dialog', { name: 'Sync settings' }).waitFor({ state: 'detached' })
    await expect.poll(() => page.locator('.sync-badge').textContent()).toBe('Local only')
    await page.reload()
    await page.getByRole('button', { name: 'Settings', exact: true }).click()
    expect(await page.getByRole('textbox', { name: 'Server URL' }).inputValue()).toBe('')
    expect(await page.getByRole('button', { name: 'Turn sync off' }).count()).toBe(0)
  })

  it('is installable and loads its shell with the network off (service worker)', async () => {
    // Its own server, so it can be shut down: with nothing to answer, only the cache can.
    const own = await serve('react-chat', app.outDir)
    try {
      const page = await open(own.url)
      const manifest = await page.evaluate(async () => {
        const href = document.querySelector<HTMLLinkElement>('link[rel="manifest"]')!.href
        return (await fetch(href)).json() as Promise<{
          display: string
          icons: { sizes: string; type: string }[]
        }>
      })
      expect(manifest.display).toBe('standalone')
      expect(manifest.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']))
      await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, {
        timeout: 15_000,
      })
      await ask(page, 'Remember me offline')

      await own.close()
      await app.context.setOffline(true)
      await page.reload()
      await composer(page).waitFor()
      expect(await page.locator('.sync-badge').textContent()).toBe('Offline')
      await expect
        .poll(() => rowText(rows(page, 'assistant').last()))
        .toBe(expectedReply('Remember me offline'))
      // The model is local too: chatting goes on with no network at all.
      await ask(page, 'Still here?')
      await screenshot(page, 'react-offline')
    } finally {
      await app.context.setOffline(false)
      await own.close()
    }
  })
})
