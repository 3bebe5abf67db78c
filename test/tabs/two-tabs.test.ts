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

// Two real tabs (two pages of one origin, in each engine) on one IndexedDB database: the writer lock
// is handed between them through the browser's lock manager and BroadcastChannel, as it is
// between a user's tabs. The store-level tests use two stores in one page; this is the real thing.

const here = new URL('.', import.meta.url).pathname

let vite: ViteDevServer
let pageUrl: string
let context: EngineContext

type Tree = { leaf: string | null; entries: Record<string, [string | null, string]>; path: string[] }
type Lock = { held: number; pending: number; holder?: string }

/** Calls `window.tab[fn](...params)` in the page. */
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
  await call(page, 'open')
  return page
}

/** Polls `read` until `done` holds (another tab's commits reach a tab over the relay). */
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

    // Each test's tabs share a context of their own (one origin's storage, lock manager and channels).
    beforeEach(async () => {
      context = await browser.newContext()
    })
    afterEach(async () => {
      await context.close()
    })

    describe('two tabs on one database', () => {
      it('append loops in both tabs at once all succeed, on one chain every tab agrees on; the lock ends held by one tab, nobody left waiting', async () => {
        const a = await tab()
        const b = await tab()
        const session_id = await call<string>(a, 'create', 'two tabs')
        // B learns of the session from A's commit over the relay.
        await until(() => call<boolean>(b, 'has', session_id), Boolean)

        const locks: Lock[] = []
        let looping = true
        const sampling = (async () => {
          while (looping) {
            locks.push(await call<Lock>(a, 'lock'))
            await new Promise((r) => setTimeout(r, 5))
          }
        })()
        type Loop = { ids: string[]; held: number }
        const [loopA, loopB] = await Promise.all([
          call<Loop>(a, 'appendLoop', session_id, 60, 'a'),
          call<Loop>(b, 'appendLoop', session_id, 60, 'b'),
        ])
        const [fromA, fromB] = [loopA.ids, loopB.ids]
        looping = false
        await sampling

        expect(fromA).toHaveLength(60)
        expect(fromB).toHaveLength(60)
        expect(new Set([...fromA, ...fromB]).size).toBe(120)
        // Never two holders, and the lock changed hands: each tab was seen holding it after appends of its own.
        expect(locks.every((l) => l.held <= 1)).toBe(true)
        expect(loopA.held).toBeGreaterThan(0)
        expect(loopB.held).toBeGreaterThan(0)

        const treeA = await until(
          () => call<Tree>(a, 'tree', session_id),
          (t) => Object.keys(t.entries).length === 120,
        )
        const treeB = await until(
          () => call<Tree>(b, 'tree', session_id),
          (t) => Object.keys(t.entries).length === 120,
        )
        expect(treeB).toEqual(treeA)
        // One chain: the path from the active leaf to the root holds every entry.
        expect(treeA.path).toHaveLength(120)
        expect(new Set(treeA.path)).toEqual(new Set([...fromA, ...fromB]))
        // Each tab's messages in the order it sent them.
        const order = [...treeA.path].reverse()
        expect(order.filter((id) => fromA.includes(id))).toEqual(fromA)
        expect(order.filter((id) => fromB.includes(id))).toEqual(fromB)
        expect(order.map((id) => treeA.entries[id]![1]).filter((t) => t.startsWith('a '))).toEqual(
          fromA.map((_, i) => `a ${i}`),
        )

        // Afterwards one tab holds the lock and nobody waits for it.
        expect(
          await until(
            () => call<Lock>(b, 'lock'),
            (l) => l.pending === 0,
          ),
        ).toMatchObject({ held: 1, pending: 0 })

        // A third tab opening the database reads the same session from disk.
        const c = await tab()
        expect(await call<Tree>(c, 'tree', session_id)).toEqual(treeA)
      }, 60_000)

      it('when the tab holding the lock closes, the other tab writes on what it wrote', async () => {
        const a = await tab()
        const b = await tab()
        const session_id = await call<string>(a, 'create', 'two tabs')
        const {
          ids: [first],
        } = await call<{ ids: string[] }>(a, 'appendLoop', session_id, 1, 'a')
        const held = await call<Lock>(b, 'lock')
        expect(held).toMatchObject({ held: 1, pending: 0 })
        await a.close()
        // A's tab is gone: the lock is free, and B's append needs nothing from it.
        expect(
          await until(
            () => call<Lock>(b, 'lock'),
            (l) => l.held === 0,
          ),
        ).toEqual({ held: 0, pending: 0 })
        await until(() => call<boolean>(b, 'has', session_id), Boolean)
        const {
          ids: [second],
        } = await call<{ ids: string[] }>(b, 'appendLoop', session_id, 1, 'b')
        const tree = await call<Tree>(b, 'tree', session_id)
        expect(tree.path).toEqual([second, first])
        const now = await call<Lock>(b, 'lock')
        expect(now).toMatchObject({ held: 1, pending: 0 })
        expect(now.holder).not.toBe(held.holder)
      }, 60_000)
    })
  })
