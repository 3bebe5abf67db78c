import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright'
import type { ViteDevServer } from 'vite'
import { INTERRUPTED_REASON } from '../../packages/parts/src/index.js'
import { launchChromium } from '../e2e/harness.js'
import { servePage } from '../support/page-server.js'
import { watchPageErrors } from '../support/page-errors.js'

// Replies across real tabs (pages of one origin in Chromium, one database, one lock manager):
// the tab writing a reply closes mid-stream, and the tabs left must see the reply end at once,
// marked interrupted once; Stop from any tab ends a reply, live writer or not.

const here = new URL('.', import.meta.url).pathname

let vite: ViteDevServer
let pageUrl: string
let browser: Browser
let context: BrowserContext
let pageErrors: () => void

type Status = { status?: string; reason?: string }

const call = <T>(page: Page, fn: string, ...params: unknown[]): Promise<T> =>
  page.evaluate(
    ([f, p]) =>
      (window as never as Record<string, Record<string, (...a: unknown[]) => unknown>>).tab[f as string](
        ...(p as unknown[]),
      ),
    [fn, params] as const,
  ) as Promise<T>

async function tab(watch: boolean): Promise<Page> {
  const page = await context.newPage()
  await page.goto(pageUrl)
  await page.waitForFunction(() => 'tab' in window)
  await call(page, 'open', watch)
  return page
}

const status = (page: Page, session_id: string): Promise<Status> => call<Status>(page, 'status', session_id)
const seen = (page: Page): Promise<Status[]> => call<Status[]>(page, 'seen')
const INTERRUPTED: Status = { status: 'error', reason: INTERRUPTED_REASON }
const WORKING: Status = { status: 'working', reason: 'replying' }

/** A tab `a` that does not watch, and a `writer` tab replying `text` in a new session that `a` sees working. */
async function replyInAnotherTab(text: string): Promise<{ a: Page; writer: Page; session_id: string }> {
  const a = await tab(false)
  const session_id = await call<string>(a, 'create')
  const writer = await tab(false)
  await call(writer, 'reply', session_id, text)
  await expect.poll(() => status(a, session_id)).toEqual(WORKING)
  return { a, writer, session_id }
}

/** Resolves once `n` tabs wait on the session's reply lock (the watchers are in place). */
const waiters = (page: Page, session_id: string, n: number): Promise<unknown> =>
  expect
    .poll(async () => (await call<{ pending: number }>(page, 'lock', session_id)).pending, {
      timeout: 10_000,
    })
    .toBe(n)

beforeAll(async () => {
  ;({ url: pageUrl, vite } = await servePage(join(here, 'reply-page')))
  browser = await launchChromium()
}, 120_000)
beforeEach(async () => {
  context = await browser.newContext()
  pageErrors = watchPageErrors(context)
})
afterEach(async () => {
  try {
    pageErrors()
  } finally {
    await context.close()
  }
})
afterAll(async () => {
  await browser?.close()
  await vite?.close()
})

describe('a reply whose tab closes', () => {
  for (const runBeforeUnload of [false, true]) {
    it(`is marked interrupted at once in every tab, by one of them (page.close({ runBeforeUnload: ${runBeforeUnload} }))`, async () => {
      const a = await tab(true)
      const session_id = await call<string>(a, 'create')
      const writer = await tab(true)
      await call(writer, 'reply', session_id, 'half a rep')
      // One tab watching from before the reply, two opened while it streams.
      const b = await tab(true)
      const c = await tab(true)
      for (const p of [a, b, c]) await expect.poll(() => status(p, session_id)).toEqual(WORKING)
      await waiters(a, session_id, 3)

      await writer.close({ runBeforeUnload })
      for (const p of [a, b, c])
        await expect.poll(() => status(p, session_id), { timeout: 5_000 }).toEqual(INTERRUPTED)

      // Once: the first tab granted the lock marks it, the others find it marked. A reply started
      // at once in A is not marked by the tabs behind it in the lock's queue.
      await call(a, 'reply', session_id, 'again')
      await call(a, 'finish')
      for (const p of [a, b, c]) {
        await expect.poll(() => status(p, session_id)).toEqual({ status: 'done' })
        expect((await seen(p)).filter((s) => s.status === 'error')).toEqual([INTERRUPTED])
        expect((await seen(p)).at(-1)).toEqual({ status: 'done' })
      }
      expect(await call(a, 'lock', session_id)).toEqual({ held: 0, pending: 0 })
    })
  }

  it('that finishes is never marked, though other tabs wait on its lock', async () => {
    const a = await tab(true)
    const session_id = await call<string>(a, 'create')
    const writer = await tab(true)
    for (let i = 0; i < 3; i++) {
      await call(writer, 'reply', session_id, `reply ${i}`)
      await waiters(a, session_id, 1)
      await call(writer, 'finish')
      await expect.poll(() => status(a, session_id)).toEqual({ status: 'done' })
    }
    await writer.close()
    expect((await seen(a)).map((s) => s.status)).toEqual([
      'working',
      'done',
      'working',
      'done',
      'working',
      'done',
    ])
    expect(await status(a, session_id)).toEqual({ status: 'done' })
  })

  it('left working when a tab opens (its writer closed before) is marked when the tab starts watching', async () => {
    const writer = await tab(false)
    const session_id = await call<string>(writer, 'create')
    await call(writer, 'reply', session_id, 'cut off')
    await writer.close()
    const a = await tab(true)
    await expect.poll(() => status(a, session_id), { timeout: 5_000 }).toEqual(INTERRUPTED)
  })

  it('of another device, streaming in over sync, is left alone by the tabs that watch, open before it or after', async () => {
    const a = await tab(true)
    const session_id = await call<string>(a, 'create')
    await call(a, 'pulled', session_id)
    const b = await tab(true)
    // The check the watch makes once the lock is free (joined when it is under way) marks nothing,
    // and neither does the one a demo app runs on open.
    expect(await call<boolean>(a, 'settle', session_id)).toBe(false)
    expect(await call<boolean>(b, 'settle', session_id)).toBe(false)
    await call(b, 'recover', session_id)
    expect(await status(a, session_id)).toEqual(WORKING)
    expect(await status(b, session_id)).toEqual(WORKING)
    expect((await seen(a)).filter((s) => s.status === 'error')).toEqual([])
  })

  it('is not marked by a tab that does not watch (the watch is what marks it)', async () => {
    const { a, writer, session_id } = await replyInAnotherTab('cut off')
    await writer.close()
    await expect.poll(async () => (await call<{ held: number }>(a, 'lock', session_id)).held).toBe(0)
    // The lock is gone and no one watches: still working, until this tab watches.
    expect(await status(a, session_id)).toEqual(WORKING)
    await call(a, 'watch')
    await expect.poll(() => status(a, session_id), { timeout: 5_000 }).toEqual(INTERRUPTED)
  })
})

describe('Stop from any tab', () => {
  it('stops a reply another live tab writes: it ends as stopped, not interrupted', async () => {
    const { a, writer, session_id } = await replyInAnotherTab('streaming')
    await call(a, 'stop', session_id)
    await expect.poll(() => call<boolean>(writer, 'stopped')).toBe(true)
    await call(writer, 'finish', true)
    await expect.poll(() => status(a, session_id)).toEqual({ status: 'done', reason: 'stopped' })
    expect((await seen(a)).filter((s) => s.status === 'error')).toEqual([])
  })

  it('ends a reply whose writer is gone: marked interrupted, in a tab that does not watch', async () => {
    const { a, writer, session_id } = await replyInAnotherTab('cut off')
    await writer.close()
    await call(a, 'stop', session_id)
    await expect.poll(() => status(a, session_id), { timeout: 5_000 }).toEqual(INTERRUPTED)
  })

  it('ends a reply left working with no lock at all', async () => {
    const a = await tab(false)
    const session_id = await call<string>(a, 'create')
    await call(a, 'orphan', session_id)
    await call(a, 'stop', session_id)
    await expect.poll(() => status(a, session_id)).toEqual(INTERRUPTED)
  })
})
