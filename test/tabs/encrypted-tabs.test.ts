import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { ViteDevServer } from 'vite'
import {
  enginesUnderTest,
  launchEngine,
  type EngineBrowser,
  type EngineContext,
  type EnginePage as Page,
} from '../support/engines.js'
import { servePage } from '../support/page-server.js'

// Two real tabs (two pages of one origin) on one encrypted store: a lock in one reaches the
// other (its calls then fail with session/locked), an unlock in one unlocks both (the keys are
// posted as non-extractable CryptoKeys), and a passphrase change in one leaves the other working.

const here = new URL('.', import.meta.url).pathname
const PASS = 'correct horse battery staple'

let vite: ViteDevServer
let pageUrl: string
let context: EngineContext

const call = <T>(page: Page, fn: string, ...params: unknown[]): Promise<T> =>
  page.evaluate(
    ([f, p]) =>
      (window as never as Record<string, Record<string, (...a: unknown[]) => unknown>>).tab[f as string](
        ...(p as unknown[]),
      ),
    [fn, params] as const,
  ) as Promise<T>

async function tab(): Promise<Page> {
  const page = await context.newPage()
  await page.goto(pageUrl)
  await page.waitForFunction(() => 'tab' in window)
  await call(page, 'openEncrypted', PASS)
  return page
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const v = await read()
    if (done(v) || i > 200) return v
    await new Promise((r) => setTimeout(r, 25))
  }
}

beforeAll(async () => {
  ;({ url: pageUrl, vite } = await servePage(join(here, 'page')))
}, 120_000)
afterAll(async () => {
  await vite?.close()
})

for (const engine of enginesUnderTest())
  describe(engine, () => {
    let browser: EngineBrowser
    beforeAll(async () => {
      browser = await launchEngine(engine)
    }, 120_000)
    afterAll(async () => {
      await browser?.close()
    })
    beforeEach(async () => {
      context = await browser.newContext()
    })
    afterEach(async () => {
      await context.close()
    })

    it('lock, unlock and a passphrase change in one tab apply in the other', async () => {
      const a = await tab()
      const b = await tab()
      const session_id = await call<string>(a, 'create', 'sealed title')
      expect(
        await until(
          () => call<string>(b, 'title', session_id),
          (t) => t === 'sealed title',
        ),
      ).toBe('sealed title')

      await call(a, 'lockStore')
      await call(b, 'whenLocked', true)
      expect(await call<string>(b, 'title', session_id)).toBe('session/locked')
      expect(await call<string>(a, 'title', session_id)).toBe('session/locked')

      await call(b, 'unlockStore', PASS)
      await call(a, 'whenLocked', false)
      expect(await call<string>(a, 'title', session_id)).toBe('sealed title')

      // A passphrase change in A: B keeps its keys and writes on; the old passphrase opens nothing.
      await call(a, 'changePassphrase', PASS, 'a new one')
      await call(b, 'rename', session_id, 'renamed in b')
      await call(a, 'close')
      await call(b, 'close')
      const c = await context.newPage()
      await c.goto(pageUrl)
      await c.waitForFunction(() => 'tab' in window)
      const refused = await c.evaluate(() =>
        (window as never as { tab: { openEncrypted(p: string): Promise<void> } }).tab
          .openEncrypted('correct horse battery staple')
          .then(
            () => 'opened',
            (e: { code?: string }) => e.code,
          ),
      )
      expect(refused).toBe('session/wrong_passphrase')
      await call(c, 'openEncrypted', 'a new one')
      expect(await call<string>(c, 'title', session_id)).toBe('renamed in b')
      await call(c, 'close')
    })
  })
