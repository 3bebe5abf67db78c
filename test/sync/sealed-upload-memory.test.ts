import { join } from 'node:path'
import { chromium, type Browser } from 'playwright'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ViteDevServer } from 'vite'
import { CHROMIUM, CHROMIUM_ARGS, playwrightPage } from '../support/engines.js'
import { servePage } from '../support/page-server.js'
import { memoryServer, type ServerProcess } from '../server/helpers.js'
import { call, inStore } from './device-calls.js'

// An end-to-end encrypted upload of a 32 MiB attachment, in Chromium against a real server
// process, holds no more than a few of its chunks (2^18 bytes each) in the page's memory at any
// time: the page's live JS heap (ArrayBuffers included; collected before every sample) is
// sampled while sync uploads it, and its growth over what it was before is bounded. Before, the
// sealed bytes were joined whole and held until the push naming them was answered (and the
// clear bytes of an encrypted store opened whole before that): over twice its size more, 64 MiB
// here against a bound of 8.

const root = new URL('../..', import.meta.url).pathname
const token = 'tok-alice'
const PASSPHRASE = 'correct horse battery staple'
const MiB = 2 ** 20
const SIZE = 32 * MiB
/** What the page may hold above its heap before the upload: a few chunks, and the hash's state. */
const BOUND = 8 * MiB

let vite: ViteDevServer
let pageUrl: string
let browser: Browser
let server: ServerProcess

beforeAll(async () => {
  ;({ url: pageUrl, vite } = await servePage(join(root, 'test/sync/page')))
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS, '--enable-precise-memory-info', '--js-flags=--expose-gc'],
  })
  server = await memoryServer([
    '--token',
    `alice=${token}`,
    '--origin',
    '*',
    '--max-attachment-bytes',
    String(2 * SIZE),
  ])
}, 120_000)
afterAll(async () => {
  await server?.stop()
  await browser?.close()
  await vite?.close()
})

describe.each([
  ['a store encrypted at rest, sync sealing with its keys', { ownKeys: true }],
  ['a clear store, sync sealing with the keyring of the server', { clearStore: true }],
] as const)('a 32 MiB attachment uploaded end-to-end encrypted (%s)', (_, mode) => {
  it('holds no more than a few chunks in the page at any time, and reaches the server', async () => {
    const context = await browser.newContext()
    try {
      const page = playwrightPage(await context.newPage())
      await page.goto(pageUrl)
      await page.waitForFunction(() => 'device' in window)
      await call(page, 'open', server.url, token, PASSPHRASE, {
        ...mode,
        start: false,
        maxAttachmentBytes: 2 * SIZE,
      })
      const put = await inStore<{ session_id: string; attachment_id: string }>(
        page,
        `
        const { session_id } = await s.create({})
        const parts = []
        for (let i = 0; i < arg / 2 ** 20; i++) parts.push(new Uint8Array(2 ** 20).fill(i * 7 + 1))
        const put = await s.putAttachment({ session_id, file: new File(parts, 'big.bin') })
        return { session_id, attachment_id: put.attachment.attachment_id }`,
        SIZE,
      )
      // Sampled after a full collection each time: what the page holds live, not garbage.
      const heap = await page.evaluate(async () => {
        const w = window as unknown as {
          gc(): void
          device: { sync(): { start(): void; flush(): Promise<void> } }
        }
        const used = (): number => {
          w.gc()
          return (performance as unknown as { memory: { usedJSHeapSize: number } }).memory.usedJSHeapSize
        }
        // What the put left is let go as the event loop turns: the baseline is taken once the
        // heap stops falling (within 1 MiB from one turn to the next).
        let before = used()
        for (let settled = 0, turns = 0; settled < 3 && turns < 200; turns++) {
          await new Promise((resolve) => setTimeout(resolve, 10))
          const now = used()
          settled = before - now < 2 ** 20 ? settled + 1 : 0
          before = Math.min(before, now)
        }
        let peak = before
        let samples = 0
        const timer = setInterval(() => {
          peak = Math.max(peak, used())
          samples++
        }, 10)
        const sync = w.device.sync()
        sync.start()
        await sync.flush()
        clearInterval(timer)
        return { before, peak, samples }
      })
      // The server holds it, sealed (longer than the clear bytes).
      const held = await page.evaluate(
        async ([url, t, p]) => {
          const res = await fetch(`${url}/attachments/${p.session_id}/${p.attachment_id}`, {
            headers: { authorization: `Bearer ${t}` },
          })
          return { status: res.status, size: Number(res.headers.get('content-length')) }
        },
        [server.url, token, put] as const,
      )
      expect(held.status).toBe(200)
      expect(held.size).toBeGreaterThan(SIZE)
      expect(heap.samples).toBeGreaterThan(10)
      expect(heap.peak - heap.before, JSON.stringify(heap)).toBeLessThanOrEqual(BOUND)
    } finally {
      await context.close()
    }
  }, 180_000)
})
