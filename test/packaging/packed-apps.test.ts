// The packages as a newcomer installs them: each packed (`pnpm pack`, what would be published),
// installed with npm into a fresh app outside the repository next to what npm resolves for a
// user (no pnpm overrides, no workspace), then
// - a React-only Vite app (no `vue` installed) built from the AI SDK and assistant-ui READMEs'
//   quick starts: the README blocks themselves, so the docs and the packages are checked together;
// - a Node program using `@colloquy/server`, type-checked with `skipLibCheck: false`, so every
//   type its declarations import must come with the package.
// It needs the registry (or npm's cache) for react, ai, @assistant-ui/react and the server's
// dependencies; one install serves both checks.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { preview } from 'vite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../e2e/harness.js'
import { ROOT, blocksOf, directiveWords } from '../docs/readme-blocks.js'

const PACKED = ['core', 'kit', 'parts', 'react', 'ai-sdk', 'assistant-ui', 'server']
// The pnpm running `npm test` (its scripts run under `npx pnpm`), else the one on the PATH.
const pnpm = process.env.npm_execpath?.includes('pnpm')
  ? [process.execPath, process.env.npm_execpath]
  : ['pnpm']

interface Run {
  code: number | null
  out: string
}
function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: {
        ...process.env,
        npm_config_update_notifier: 'false',
        npm_config_fund: 'false',
        npm_config_audit: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    const timer = setTimeout(() => {
      out += `\n[killed after ${timeoutMs} ms]`
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        /* gone */
      }
    }, timeoutMs)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, out })
    })
  })
}

/** The README's `browser` quick start: the block a newcomer copies. */
function quickStart(readme: string): string {
  const block = blocksOf(readme, readFileSync(join(ROOT, readme), 'utf8')).find((b) =>
    directiveWords(b, 'browser'),
  )
  if (!block) throw new Error(`${readme} has no browser quick start`)
  return block.text
}

let app = ''
let installed: Run = { code: null, out: '' }

beforeAll(async () => {
  app = mkdtempSync(join(tmpdir(), 'colloquy-packed-'))
  const packs = join(app, 'packs')
  mkdirSync(packs)
  for (const name of PACKED) {
    const packed = await run(
      pnpm[0],
      [...pnpm.slice(1), 'pack', '--pack-destination', packs],
      join(ROOT, 'packages', name),
      120_000,
    )
    if (packed.code !== 0) throw new Error(`pnpm pack ${name}:\n${packed.out}`)
  }
  const tarballs = readdirSync(packs).map((f) => `./packs/${f}`)
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'newcomer-app', private: true, type: 'module' }),
  )
  // The versions the AI SDK README says go together; the rest as a newcomer would take them.
  installed = await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      ...tarballs,
      'react@19',
      'react-dom@19',
      'ai@6.0.325',
      '@ai-sdk/react@3.0.328',
      '@assistant-ui/react@0.15',
      '@types/node@20',
      '@types/react@19',
      '@types/react-dom@19',
    ],
    app,
    480_000,
  )
  if (installed.code !== 0) throw new Error(`npm install:\n${installed.out}`)
}, 600_000)

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true })
})

/** Whether any record of any IndexedDB database of the page holds `text` (run in the page). */
async function storedText(text: string): Promise<boolean> {
  const req = <T>(r: IDBRequest<T>): Promise<T> =>
    new Promise((resolve, reject) => {
      r.onsuccess = () => resolve(r.result)
      r.onerror = () => reject(r.error)
    })
  for (const { name } of await indexedDB.databases()) {
    if (!name) continue
    const db = await req(indexedDB.open(name))
    try {
      for (const store of [...db.objectStoreNames])
        if (JSON.stringify(await req(db.transaction(store).objectStore(store).getAll())).includes(text))
          return true
    } finally {
      db.close()
    }
  }
  return false
}

describe('packed packages installed with npm', () => {
  it('a React app with @colloquy/ai-sdk and @colloquy/assistant-ui builds without vue installed', async () => {
    expect(existsSync(join(app, 'node_modules', 'vue'))).toBe(false)
    // The pair the AI SDK README names shares one `ai` (npm nests a second copy otherwise).
    expect(existsSync(join(app, 'node_modules', '@ai-sdk', 'react', 'node_modules', 'ai'))).toBe(false)
    writeFileSync(join(app, 'ai-sdk.tsx'), quickStart('packages/ai-sdk/README.md'))
    writeFileSync(join(app, 'assistant-ui.tsx'), quickStart('packages/assistant-ui/README.md'))
    for (const page of ['ai-sdk', 'assistant-ui']) {
      writeFileSync(
        join(app, `${page}.html`),
        `<!doctype html><div id="root"></div><script type="module" src="./${page}.tsx"></script>\n`,
      )
    }
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          jsx: 'react-jsx',
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        },
      }),
    )
    writeFileSync(
      join(app, 'vite.config.mjs'),
      `export default { build: { rollupOptions: { input: ['ai-sdk.html', 'assistant-ui.html'] } } }\n`,
    )
    // The repository's Vite (7), run from the app: it resolves everything from the app's node_modules.
    const built = await run(
      process.execPath,
      [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
      app,
      240_000,
    )
    expect(built.code, built.out).toBe(0)
    const assets = readdirSync(join(app, 'dist', 'assets')).filter((f) => f.endsWith('.js'))
    const code = assets.map((f) => readFileSync(join(app, 'dist', 'assets', f), 'utf8')).join('\n')
    expect(code).toContain('colloquy')
    // The app type-checks as written, against the packed declarations.
    const checked = await run(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      app,
      240_000,
    )
    expect(checked.code, checked.out).toBe(0)
  }, 480_000)

  it('both quick starts run in Chromium on what npm installed: a message, its reply, the chat again after a reload', async () => {
    expect(existsSync(join(app, 'dist', 'assistant-ui.html')), 'built by the test above').toBe(true)
    const resolved = JSON.parse(
      readFileSync(join(app, 'node_modules/@assistant-ui/core/package.json'), 'utf8'),
    ) as { version: string }
    console.log(`npm resolved @assistant-ui/core ${resolved.version}`)
    const server = await preview({
      root: app,
      configFile: false,
      logLevel: 'warn',
      preview: { host: '127.0.0.1', port: 0, open: false },
    })
    const browser = await launchChromium()
    try {
      const base = server.resolvedUrls!.local[0]
      const page = await browser.newPage()
      // The AI SDK quick start posts to the app's `/api/chat`: answered as a route would, with
      // the SDK's UI message stream.
      await page.route('**/api/chat', (route) =>
        route.fulfill({
          headers: { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' },
          body:
            [
              { type: 'start' },
              { type: 'start-step' },
              { type: 'text-start', id: 't1' },
              { type: 'text-delta', id: 't1', delta: 'Hi from the route' },
              { type: 'text-end', id: 't1' },
              { type: 'finish-step' },
              { type: 'finish' },
            ]
              .map((p) => `data: ${JSON.stringify(p)}\n\n`)
              .join('') + 'data: [DONE]\n\n',
        }),
      )
      for (const [html, reply] of [
        ['assistant-ui.html', 'You said: Hello npm'],
        ['ai-sdk.html', 'Hi from the route'],
      ]) {
        await page.goto(new URL(html, base).href)
        await page.getByLabel('Message').fill('Hello npm')
        await page.getByRole('button', { name: 'Send', exact: true }).click()
        await page.getByText(reply).waitFor()
        // The quick starts write the reply in the background as it streams: shown is not yet
        // stored. Reloaded once the page's IndexedDB holds it (a reload before that may find it
        // cut short, as any write in flight; a loaded machine made that window seconds long).
        await page.waitForFunction(storedText, reply, { polling: 100 })
        await page.reload()
        await page.getByText(reply).waitFor()
        await page.getByText('Hello npm', { exact: true }).first().waitFor()
      }
    } finally {
      await browser.close()
      await server.close()
    }
  }, 240_000)

  it('a Node program using @colloquy/server type-checks with skipLibCheck: false', async () => {
    const dir = join(app, 'server-app')
    mkdirSync(dir)
    writeFileSync(
      join(dir, 'main.ts'),
      [
        "import { createServer, fileStorage, postgresStorage, memoryStorage } from '@colloquy/server'",
        "const server = await createServer({ storage: process.env.DATABASE_URL ? postgresStorage({ connectionString: process.env.DATABASE_URL }) : fileStorage({ dir: './data' }), token: { s3cret: 'alice' } })",
        "const { url } = await server.listen({ port: 0, host: '127.0.0.1' })",
        'console.log(url, memoryStorage)',
        'await server.close()',
        '',
      ].join('\n'),
    )
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
        },
        files: ['main.ts'],
      }),
    )
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
    const checked = await run(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      dir,
      240_000,
    )
    expect(checked.code, checked.out).toBe(0)
  }, 240_000)

  it('npx colloquy-server runs the installed command', async () => {
    const help = await run('npx', ['colloquy-server', '--help'], app, 60_000)
    expect(help.code, help.out).toBe(0)
    expect(help.out).toContain('Usage: colloquy-server')
  })
})
