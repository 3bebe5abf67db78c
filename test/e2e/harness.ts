import { createHash, type Hash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright'
import { build, preview } from 'vite'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { composer } from './chat-page.js'
import { watchPageErrors } from '../support/page-errors.js'

const repo = fileURLToPath(new URL('../..', import.meta.url))
const screenshots = fileURLToPath(new URL('./screenshots/', import.meta.url))

export type Example = 'react-chat' | 'vue-chat' | 'assistant-ui-chat' | 'ai-sdk-chat'

const configOf = (example: Example): { root: string; configFile: string } => ({
  root: `${repo}examples/${example}`,
  configFile: `${repo}examples/${example}/vite.config.ts`,
})

/**
 * A production build of an example into a directory of its own under test/e2e/.tmp; resolves
 * with it. Of its own, because test files run at once in several workers, and a build empties
 * its directory first: a shared one would be emptied under another file's running server.
 */
export async function buildExample(example: Example): Promise<string> {
  mkdirSync(`${repo}test/e2e/.tmp`, { recursive: true })
  const outDir = mkdtempSync(`${repo}test/e2e/.tmp/${example}-`)
  // Vitest runs with NODE_ENV=test, which would make Vite build in development mode (no
  // service worker, React's dev build): what users get is a production build.
  const saved = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  try {
    await build({
      ...configOf(example),
      mode: 'production',
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
    })
  } finally {
    process.env.NODE_ENV = saved
  }
  return outDir
}

/** Removes a build `buildExample` made. */
export const removeBuild = (outDir: string): void => rmSync(outDir, { recursive: true, force: true })

// What a production build of an example is made from: every example's own files (they share
// chat-kit), the packages' sources and manifests, and the lockfile. Tests and outputs are not.
const notSources = new Set(['node_modules', 'dist', 'test', '.tmp'])

function hashTree(hash: Hash, dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (notSources.has(entry.name)) continue
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) hashTree(hash, path)
    else if (entry.isFile()) hash.update(`${path}\0`).update(readFileSync(path))
  }
}

/** A digest of the sources the examples are built from (hashing them takes milliseconds; a build, seconds). */
function sourcesKey(): string {
  const hash = createHash('sha256')
  hashTree(hash, `${repo}examples`)
  for (const pkg of readdirSync(`${repo}packages`).sort()) {
    hashTree(hash, `${repo}packages/${pkg}/src`)
    hash.update(readFileSync(`${repo}packages/${pkg}/package.json`))
  }
  hash.update(readFileSync(`${repo}pnpm-lock.yaml`))
  return hash.digest('hex').slice(0, 16)
}

/**
 * The production build of `example` for the sources as they are, made once and shared by every
 * test file that serves it, read-only: most demo suites need the same build, and making it once
 * a file cost seconds of CPU each. A build is made in a directory of its own and renamed into
 * place, which is atomic and refuses a directory that is already there: two files that build at
 * once both get a whole build, one of them the other's. Builds of other sources are removed.
 */
export async function sharedBuild(example: Example): Promise<string> {
  const key = `${example}-${sourcesKey()}`
  const shared = `${repo}test/e2e/.tmp/shared`
  const dir = `${shared}/${key}`
  if (existsSync(dir)) return dir
  const made = await buildExample(example)
  mkdirSync(shared, { recursive: true })
  try {
    renameSync(made, dir)
  } catch (error) {
    if (!existsSync(dir)) throw error
    removeBuild(made) // another file's build of the same sources got there first
  }
  for (const old of readdirSync(shared))
    if (old.startsWith(`${example}-`) && old !== key) removeBuild(`${shared}/${old}`)
  return dir
}

/** A free TCP port on 127.0.0.1. */
export const freePort = (): Promise<number> =>
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
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

/** Debian's Chromium, headless; never a downloaded browser. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs })

/** Saves test/e2e/screenshots/<name>.png: the main screens, for people to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshots, { recursive: true })
  await page.screenshot({ path: `${screenshots}${name}.png` })
}

/** What a demo app's suite works with: set up by `useExample` around each test. */
export interface ExampleSuite {
  /** Where the app was built. */
  readonly outDir: string
  /** The app, served from `outDir` for the whole file. */
  readonly served: Served
  /** The current test's browser context. */
  readonly context: BrowserContext
  /** A new page of the current context at `url` (the served app by default), once its composer shows. */
  open(url?: string): Promise<Page>
}

/**
 * Registers a demo app suite's hooks: serves the shared build of `example` and launches Chromium once per
 * file, and gives every test a fresh context (its own IndexedDB, service worker and caches).
 */
export function useExample(example: Example): ExampleSuite {
  let outDir: string | undefined
  let served: Served | undefined
  let browser: Browser | undefined
  let context: BrowserContext | undefined
  let pageErrors: (() => void) | undefined

  beforeAll(async () => {
    outDir = await sharedBuild(example)
    served = await serve(example, outDir)
    browser = await launchChromium()
  }, 180_000) // a production build of the app comes first
  afterAll(async () => {
    await browser?.close()
    await served?.close()
  })
  beforeEach(async () => {
    context = await browser!.newContext({ viewport: { width: 1280, height: 800 } })
    pageErrors = watchPageErrors(context)
  })
  afterEach(async () => {
    try {
      pageErrors!()
    } finally {
      await context!.close()
    }
  })

  const suite: ExampleSuite = {
    get outDir() {
      return outDir!
    },
    get served() {
      return served!
    },
    get context() {
      return context!
    },
    async open(url = suite.served.url) {
      const page = await suite.context.newPage()
      await page.goto(url)
      await composer(page).waitFor()
      return page
    },
  }
  return suite
}
