import type { Page } from 'playwright'
import { describe, expect, it } from 'vitest'
import { ask, rows } from './chat-page.js'
import { useExample } from './harness.js'

// react-chat's settings offer "Encrypt my chats": the chats written in clear are encrypted in
// place, the app asks for the passphrase whenever it opens (a wrong one opens nothing), and the
// database's raw records hold no byte of what was written.

const app = useExample('react-chat')
const MARKER = 'Kx3tides'

/**
 * Every record of the demo's database, read raw in the page (Blobs and bytes as the characters
 * their bytes are), as text. In the page, so not `test/support/raw-idb.ts`'s, which a page imports.
 */
const rawRecords = (page: Page): Promise<string> =>
  page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open('colloquy-demo')
      r.onsuccess = () => resolve(r.result)
      r.onerror = () => reject(r.error)
    })
    const out: string[] = []
    for (const name of [...db.objectStoreNames]) {
      const values = await new Promise<unknown[]>((resolve, reject) => {
        const r = db.transaction(name).objectStore(name).getAll()
        r.onsuccess = () => resolve(r.result)
        r.onerror = () => reject(r.error)
      })
      const latin1 = new TextDecoder('latin1')
      // Bytes anywhere in a record (an encrypted entry's box is bytes at rest) as the characters they are.
      const bytesAsText = (_key: string, x: unknown) =>
        x instanceof ArrayBuffer || ArrayBuffer.isView(x) ? latin1.decode(x) : x
      for (const v of values)
        out.push(v instanceof Blob ? latin1.decode(await v.arrayBuffer()) : JSON.stringify(v, bytesAsText))
    }
    db.close()
    return out.join('\n')
  })

describe('react-chat: Encrypt my chats', () => {
  it('encrypts the chats in place, asks for the passphrase on open, and leaves no plaintext in IndexedDB', async () => {
    const page = await app.open()
    await ask(page, `Tell me about ${MARKER}`)
    expect(await rawRecords(page)).toContain(MARKER)
    // A search index written while the chats were clear (its own database) goes with them.
    await page.keyboard.press('ControlOrMeta+k')
    await page.getByRole('combobox', { name: 'Search chats' }).pressSequentially(MARKER.toLowerCase())
    await page.getByRole('dialog', { name: 'Search chats' }).getByRole('option').first().waitFor()
    await page.keyboard.press('Escape')
    await expect
      .poll(() => page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name)))
      .toContain('colloquy-demo:search')

    await page.getByRole('button', { name: 'Settings', exact: true }).click()
    await page.getByLabel('Encrypt my chats').check()
    await page.getByLabel(/^Passphrase/).fill('a long passphrase')
    await page.getByLabel('The same again').fill('a long passphrase')
    await page.getByRole('button', { name: 'Encrypt my chats' }).click()
    await page.getByRole('dialog').waitFor({ state: 'detached' })
    await expect.poll(() => rawRecords(page), { timeout: 20_000 }).not.toContain(MARKER)
    await expect
      .poll(() => page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name)))
      .not.toContain('colloquy-demo:search')

    await page.reload()
    await page.getByRole('heading', { name: 'Your chats are encrypted' }).waitFor()
    await page.getByLabel('Passphrase').fill('not the passphrase')
    await page.getByRole('button', { name: 'Unlock' }).click()
    await page.getByRole('alert').filter({ hasText: 'does not open' }).waitFor()
    await page.getByLabel('Passphrase').fill('a long passphrase')
    await page.getByRole('button', { name: 'Unlock' }).click()
    await page.getByRole('button', { name: 'Settings', exact: true }).waitFor()
    await page.getByText(`Tell me about ${MARKER}`).first().click()
    await expect.poll(() => rows(page, 'user').count(), { timeout: 10_000 }).toBeGreaterThan(0)
    expect(await rawRecords(page)).not.toContain(MARKER)

    // "Lock after": chosen in the settings, applied when the app next opens. The page's clock is
    // Playwright's (timers run on real time until fast-forwarded): a minute without use passes
    // at once, and the app is back at its unlock screen.
    await page.getByRole('button', { name: 'Settings', exact: true }).click()
    await page.getByLabel(/^Lock after/).selectOption({ label: '1 minute without use' })
    await page.keyboard.press('Escape')
    await page.clock.install()
    await page.reload()
    await page.getByLabel('Passphrase').fill('a long passphrase')
    await page.getByRole('button', { name: 'Unlock' }).click()
    await page.getByRole('button', { name: 'Settings', exact: true }).waitFor()
    // Use keeps it open: 50 s, a key pressed, 50 s more (100 s in all, never a minute idle), and
    // a chat turn still goes through (a lock at 60 s would have unmounted the chat under it).
    await page.clock.fastForward(50_000)
    await page.keyboard.press('Shift')
    await page.clock.fastForward(50_000)
    await ask(page, 'Still there?')
    // Then a minute without use: locked, and nothing of the chats on screen.
    await page.clock.fastForward(61_000)
    await page.getByRole('heading', { name: 'Your chats are encrypted' }).waitFor()
    expect(await page.getByText(`Tell me about ${MARKER}`).count()).toBe(0)
  })
})
