import { chromium, type Browser } from 'playwright'
import { createServer, type ViteDevServer } from 'vite'

// What the multi-page tests share: a Vite dev server for a test page (packages resolved from
// source) and the system Chromium, launched with the flags every browser test here uses.

export const CHROMIUM_ARGS = [
  '--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
  '--disable-quic',
]

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })

/** Serves the page in `root` on a free loopback port; `url` is its address. */
export async function servePage(root: string): Promise<{ url: string; vite: ViteDevServer }> {
  const vite = await createServer({
    configFile: false,
    root,
    logLevel: 'error',
    resolve: { conditions: ['source', 'module', 'browser', 'development|production'] },
    server: { host: '127.0.0.1', port: 0, strictPort: false },
  })
  await vite.listen()
  return { url: vite.resolvedUrls!.local[0]!, vite }
}
