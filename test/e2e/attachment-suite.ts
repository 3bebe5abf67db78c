import type { Page } from 'playwright'
import { describe, expect, it } from 'vitest'
import { composer, rows } from './chat-page.js'
import { screenshot, useExample, type Example } from './harness.js'

// A real 2x2 PNG, so the <img> decodes.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=='
const chips = (page: Page) => page.getByRole('list', { name: 'Attachments' }).locator('li')

/** Pastes an image into the composer, as a screenshot pasted from the clipboard arrives. */
async function pasteImage(page: Page, name: string): Promise<void> {
  await composer(page).evaluate(
    (el, [b64, n]) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
      const data = new DataTransfer()
      data.items.add(new File([bytes], n, { type: 'image/png' }))
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
    },
    [PNG, name] as const,
  )
}

/** The composer's attachments in a demo app: the same behaviour in the React and the Vue demo. */
export function attachmentSuite(example: Example): void {
  const { open } = useExample(example)

  describe(`${example} composer attachments`, () => {
    it('a pasted image becomes a chip that survives a reload; sent, it shows in the transcript and in a second tab', async () => {
      const page = await open()
      // No chat is open: attaching starts one.
      await pasteImage(page, 'shot.png')
      await expect.poll(() => chips(page).count()).toBe(1)
      expect(new URL(page.url()).hash).toMatch(/^#\/c\/s_/)
      expect(await chips(page).first().textContent()).toContain('shot.png')
      await expect.poll(() => chips(page).first().locator('img').getAttribute('src')).toMatch(/^blob:/)
      await composer(page).fill('look at this')
      // The draft is saved after a pause in typing: a second tab on the same chat shows it, chip
      // and all, once it is stored, and so does this one after a reload.
      const other = await open(page.url())
      await expect.poll(() => composer(other).inputValue()).toBe('look at this')
      await expect.poll(() => chips(other).count()).toBe(1)
      await page.reload()
      await composer(page).waitFor()
      await expect.poll(() => chips(page).count()).toBe(1)
      expect(await composer(page).inputValue()).toBe('look at this')
      await screenshot(page, `${example === 'react-chat' ? 'react' : 'vue'}-composer-chips`)

      await composer(page).press('Enter')
      const sent = rows(page, 'user').last()
      await expect.poll(() => sent.locator('[data-block="image"] img').getAttribute('src')).toMatch(/^blob:/)
      expect(
        await sent
          .locator('[data-block="image"] img')
          .evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth),
      ).toBe(2)
      expect(await chips(page).count()).toBe(0)
      expect(await composer(page).inputValue()).toBe('')
      // The other tab sees the message with its image, and its composer emptied.
      const there = rows(other, 'user').last()
      await expect.poll(() => there.locator('[data-block="image"] img').getAttribute('src')).toMatch(/^blob:/)
      await expect.poll(() => chips(other).count()).toBe(0)
      // After a reload the message's image is read from the attachment store again.
      await page.reload()
      await expect
        .poll(() => rows(page, 'user').last().locator('[data-block="image"] img').getAttribute('src'))
        .toMatch(/^blob:/)
    })

    it('picked files become chips; a removed chip is gone after a reload', async () => {
      const page = await open()
      await page.locator('form.composer input[type="file"]').setInputFiles([
        { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('some notes') },
        { name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from(PNG, 'base64') },
      ])
      await expect.poll(() => chips(page).count()).toBe(2)
      await page.getByRole('button', { name: 'Remove notes.txt' }).click()
      await expect.poll(() => chips(page).count()).toBe(1)
      await page.reload()
      await composer(page).waitFor()
      await expect.poll(() => chips(page).count()).toBe(1)
      expect(await chips(page).first().textContent()).toContain('photo.png')
    })
  })
}
