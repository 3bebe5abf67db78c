import { mkdirSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright'
import { build, preview } from 'vite'

const repo = fileURLToPath(new URL('../..', import.meta.url))
const screenshots = fileURLToPath(new URL('./screenshots/', import.meta.url))

export type Example = 'react-chat' | 'vue-chat'

const configOf = (example: Example): { root: string; configFile: string } => ({
  root: `${repo}examples/${example}`,
  configFile: `${repo}examples/${example}/vite.config.ts`,
})

/** A production build of an example into test/e2e/.tmp; resolves with its directory. */
export async function buildExample(example: Example): Promise<string> {
  const outDir = `${repo}test/e2e/.tmp/${example}`
  // Vitest runs with NODE_ENV=test, which would make Vite build in development mode (no
  // service worker, React's dev build): what users get is a production build.
  const saved = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  try {
    await build({ ...configOf(example), mode: 'production', logLevel: 'warn', build: { outDir, emptyOutDir: true } })
  } finally {
    process.env.NODE_ENV = saved
  }
  return outDir
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

export interface Served {
  url: string
  close(): Promise<void>
}

/** Serves a build with `vite preview` on 127.0.0.1 and a free port, as the demo command does. */
export async function serve(example: Example, outDir: string): Promise<Served> {
  const port = await freePort()
  const server = await preview({
    ...configOf(example),
    logLevel: 'warn',
    build: { outDir },
    preview: { host: '127.0.0.1', port, strictPort: true, open: false },
  })
  return { url: `http://127.0.0.1:${port}/`, close: () => server.close() }
}

// The flags of the browser test project in vite.config.ts (importing that file here would load
// Vitest's browser provider into the Node test process).
const chromiumArgs = [
  '--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
]

/** Debian's Chromium, headless; never a downloaded browser. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs })

/** Saves test/e2e/screenshots/<name>.png: the main screens, for people to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshots, { recursive: true })
  await page.screenshot({ path: `${screenshots}${name}.png` })
}
