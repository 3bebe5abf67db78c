import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright'
import { build, preview } from 'vite'

const args = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

/** The repository's test/bench folder, wherever the runner bundled the caller to. */
function benchDir(): string {
  let dir = fileURLToPath(new URL('.', import.meta.url))
  while (!dir.endsWith('/test/bench/') && dir !== '/') dir = join(dir, '..') + '/'
  return dir
}

type Bench = Record<string, (...a: never[]) => unknown>

/** Calls `window.bench[fn](...params)` in a sync page (`sync-page/main.ts`). */
export const call = <T>(page: Page, fn: string, ...params: unknown[]): Promise<T> =>
  page.evaluate(
    ([f, p]) =>
      ((window as never as { bench: Bench }).bench[f as string] as (...a: unknown[]) => unknown)(
        ...(p as unknown[]),
      ),
    [fn, params] as const,
  ) as Promise<T>

export const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

/**
 * The sync page (`sync-page/`: the built `@colloquy/core` and `@colloquy/sync` on real IndexedDB)
 * served on loopback, and headless Chromium to open it: `page()` opens a fresh device (its own
 * browser context). The S1–S3 workloads drive these pages against real server processes.
 */
export async function syncPages(): Promise<{ page(): Promise<Page>; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-sync-page-'))
  await build({
    configFile: false,
    root: join(benchDir(), 'sync-page'),
    logLevel: 'error',
    resolve: { conditions: ['source', 'module', 'browser', 'production'] },
    build: { outDir: dir, emptyOutDir: true, target: 'es2022' },
  })
  const site = await preview({
    configFile: false,
    root: dir,
    logLevel: 'error',
    build: { outDir: dir },
    preview: { host: '127.0.0.1', port: 0 },
  })
  const pageUrl = site.resolvedUrls!.local[0]
  let browser: Browser | undefined
  const close = async (): Promise<void> => {
    await browser?.close()
    await new Promise<void>((r) => site.httpServer.close(() => r()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args })
  } catch (e) {
    await close()
    throw e
  }
  return {
    async page() {
      const p = await (await browser!.newContext()).newPage()
      await p.goto(pageUrl)
      await p.waitForFunction(() => 'bench' in window)
      return p
    },
    close,
  }
}
