import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { enginesUnderTest, launchEngine, type EngineBrowser } from '../support/engines.js'
import { noteLimit } from '../support/engine-limit.js'

// The engine driver every multi-page test stands on: in each engine, pages of one context share
// an origin's IndexedDB, contexts do not, evaluation returns values and page errors reject.

let server: Server
let url: string
beforeAll(async () => {
  server = createServer((_, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>t</title>'),
  )
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

const put = (value: string) =>
  new Promise<void>((resolve, reject) => {
    const open = indexedDB.open('driver-test', 1)
    open.onupgradeneeded = () => open.result.createObjectStore('kv')
    open.onerror = () => reject(open.error)
    open.onsuccess = () => {
      const tx = open.result.transaction('kv', 'readwrite')
      tx.objectStore('kv').put(value, 'k')
      tx.oncomplete = () => (open.result.close(), resolve())
      tx.onerror = () => reject(tx.error)
    }
  })
const get = () =>
  new Promise<string | null>((resolve, reject) => {
    const open = indexedDB.open('driver-test', 1)
    open.onupgradeneeded = () => open.result.createObjectStore('kv')
    open.onerror = () => reject(open.error)
    open.onsuccess = () => {
      const req = open.result.transaction('kv').objectStore('kv').get('k')
      req.onsuccess = () => (open.result.close(), resolve((req.result as string | undefined) ?? null))
    }
  })

for (const engine of enginesUnderTest()) {
  describe(engine, () => {
    let browser: EngineBrowser
    beforeAll(async () => {
      browser = await launchEngine(engine)
    }, 120_000)
    afterAll(() => browser?.close())

    it('reports its version; evaluates with an argument; a throw in the page rejects with its message', async ({
      task,
    }) => {
      expect(browser.version).toMatch(/\d+\.\d+/)
      // The version the support table names (test/engines/support.ts).
      task.meta.version = browser.version
      const ctx = await browser.newContext()
      const page = await ctx.newPage()
      await page.goto(url)
      expect(
        await page.evaluate((a: { n: number }) => ({ twice: a.n * 2, origin: location.origin }), { n: 21 }),
      ).toEqual({ twice: 42, origin: url.slice(0, -1) })
      expect(await page.evaluate(async () => undefined)).toBeNull()
      await expect(
        page.evaluate(() => {
          throw new TypeError('nope')
        }),
      ).rejects.toThrow(/TypeError: nope/)
      // A result the script protocols cannot carry (they go through JSON) rejects, and at once:
      // it must not leave the evaluation unsettled until its timeout. Playwright has a
      // serializer of its own that carries cycles.
      if (engine !== 'chromium') {
        await expect(
          page.evaluate(() => {
            const cycle: Record<string, unknown> = {}
            cycle.self = cycle
            return cycle
          }),
        ).rejects.toThrow(/TypeError: .*cycl/i)
      }
      await ctx.close()
    })

    it('pages of one context share IndexedDB; another context does not see it', async (ctx) => {
      const a = await browser.newContext()
      const [p1, p2] = [await a.newPage(), await a.newPage()]
      await p1.goto(url)
      await p2.goto(url)
      await p1.evaluate(put, 'from p1')
      expect(await p2.evaluate(get)).toBe('from p1')
      // Five 10 ms timers in the tab behind: an engine that runs a background tab's timers
      // once a second takes seconds (the multi-page tests bring a page forward before timing).
      const behind = await p1.evaluate(async () => {
        const t = performance.now()
        for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 10))
        return performance.now() - t
      })
      if (behind > 2_000)
        noteLimit(
          ctx,
          `a tab behind another runs its timers about once a second (five 10 ms timers took ${(behind / 1000).toFixed(0)} s)`,
        )
      const b = await browser.newContext()
      const q = await b.newPage()
      await q.goto(url)
      expect(await q.evaluate(get)).toBeNull()
      await a.close()
      await b.close()
    })
  })
}
