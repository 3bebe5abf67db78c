import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ask, chats, composer, expectedReply, rows, rowText } from './chat-page.js'
import { freePort, launchChromium } from './harness.js'
import { watchPageErrors } from '../support/page-errors.js'

// What the README's main command wires together: `npm start` builds the packages, then runs the
// demo's `start` script, which starts colloquy-server on its file storage and serves the demo
// with the sync routes proxied to it. Here that script runs as it is (built packages, file
// storage in a temporary directory, free ports), and two browser contexts are two devices.

const repo = fileURLToPath(new URL('../..', import.meta.url))
const app = join(repo, 'examples/react-chat')

let start: ChildProcess
let restarted: ChildProcess | undefined
let url: string
let dataDir: string
let browser: Browser
let log = ''
/** The checks of every device's page errors, run after each test. */
const pageErrorChecks: Array<() => void> = []

/** Resolves with the first match of `pattern` in what `child` writes to stdout. */
const printed = (child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> =>
  new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (d: Buffer) => {
      out += d
      log += d
      const m = pattern.exec(out)
      if (m) resolve(m)
    })
    child.once('exit', (code) =>
      reject(new Error(`exited with code ${code} before printing ${pattern}:\n${log}`)),
    )
  })

const exited = (pid: number): boolean =>
  !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'Z'

/** The colloquy-server process the start script spawned: its pid and its command line. */
function serverOf(parent: number): { pid: number; argv: string[] } {
  const children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
  for (const pid of children) {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
    if (argv.some((a) => a.endsWith('packages/server/dist/cli.js'))) return { pid, argv }
  }
  throw new Error(`no colloquy-server under ${parent}`)
}

/** The sync badge's text, as the reader sees it. */
const badge = (page: Page): Promise<string> => page.locator('.sync-badge [role="status"]').innerText()

/** Records every text the badge shows from now on, in `window.badgeSeen`. */
const recordBadge = (page: Page): Promise<void> =>
  page.evaluate(() => {
    const el = document.querySelector('.sync-badge [role="status"]')!
    const seen: string[] = [el.textContent ?? '']
    ;(window as unknown as { badgeSeen: string[] }).badgeSeen = seen
    new MutationObserver(() => {
      const text = document.querySelector('.sync-badge [role="status"]')?.textContent ?? ''
      if (seen.at(-1) !== text) seen.push(text)
    }).observe(document.querySelector('.topbar')!, { subtree: true, childList: true, characterData: true })
  })

async function device(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  pageErrorChecks.push(watchPageErrors(context))
  const page = await context.newPage()
  await page.goto(url)
  await composer(page).waitFor()
  return page
}

beforeAll(async () => {
  // The README's command, step by step: the root script runs the demo's `start`, which is this script.
  const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
  const demo = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
  expect(root.scripts.start).toMatch(/run build && .*--filter react-chat start$/)
  expect(demo.scripts.start).toBe('node scripts/start.mjs')

  dataDir = mkdtempSync(join(tmpdir(), 'colloquy-npm-start-'))
  const [port, serverPort] = [await freePort(), await freePort()]
  // As a user's shell runs it: no test-runner environment (NODE_ENV=test would make a dev build).
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'NODE_ENV' && !k.startsWith('VITEST')),
  )
  start = spawn(process.execPath, ['scripts/start.mjs'], {
    cwd: app,
    env: { ...env, PORT: String(port), COLLOQUY_SERVER_PORT: String(serverPort), COLLOQUY_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  // The preview logs every proxied request that finds the server down: kept for a failure's message.
  start.stderr!.on('data', (d: Buffer) => void (log += d))
  url = (await printed(start, /Colloquy demo: (\S+)/))[1]
  browser = await launchChromium()
}, 180_000)

afterEach(() => {
  for (const check of pageErrorChecks.splice(0)) check()
})

afterAll(async () => {
  await browser?.close()
  restarted?.kill('SIGTERM')
  start?.kill('SIGTERM')
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

describe('npm start: the demo and its sync server', () => {
  it('syncs a chat both ways between two devices, and catches up after the server restarts (Syncing, then Synced)', async () => {
    const one = await device()
    const two = await device()
    // Sync is on with no setup: the build talks to the server it was started with.
    for (const d of [one, two]) await expect.poll(() => badge(d), { timeout: 20_000 }).toBe('Synced')

    await ask(one, 'Hello from device one')
    await expect
      .poll(() => chats(two).locator('.session-title').allTextContents(), { timeout: 20_000 })
      .toEqual(['Hello from device one'])
    await chats(two).first().locator('a').click()
    await expect
      .poll(() => rowText(rows(two, 'assistant').last()), { timeout: 20_000 })
      .toBe(expectedReply('Hello from device one'))

    // And back: device two answers in the same chat.
    await ask(two, 'Device two answers')
    await expect
      .poll(() => rowText(rows(one, 'assistant').last()), { timeout: 20_000 })
      .toBe(expectedReply('Device two answers'))
    expect(await rows(one).count()).toBe(4)

    // The server goes down: device one keeps working locally, its change waits in the outbox.
    const server = serverOf(start.pid!)
    process.kill(server.pid, 'SIGTERM')
    await expect.poll(() => exited(server.pid), { timeout: 10_000 }).toBe(true)
    await expect.poll(() => badge(one), { timeout: 20_000 }).not.toBe('Synced')
    await ask(one, 'Written while the server was down')
    await expect.poll(() => badge(one), { timeout: 20_000 }).toMatch(/pending/)
    await recordBadge(one)

    // The same server, started again with the command line the start script used.
    restarted = spawn(server.argv[0], server.argv.slice(1), {
      cwd: app,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await printed(restarted, /listening on/)
    await expect.poll(() => badge(one), { timeout: 30_000 }).toBe('Synced')
    const seen = await one.evaluate(() => (window as unknown as { badgeSeen: string[] }).badgeSeen)
    const syncing = seen.findIndex((s) => s.startsWith('Syncing'))
    expect(syncing, `badge went through ${JSON.stringify(seen)}`).toBeGreaterThan(-1)
    expect(seen.at(-1)).toBe('Synced')

    await expect
      .poll(() => rowText(rows(two, 'assistant').last()), { timeout: 30_000 })
      .toBe(expectedReply('Written while the server was down'))
    // A third device, new after the restart, gets the whole chat from the server's files.
    const three = await device()
    await expect
      .poll(() => chats(three).locator('.session-title').allTextContents(), { timeout: 20_000 })
      .toEqual(['Hello from device one'])
    await chats(three).first().locator('a').click()
    await expect.poll(() => rows(three).count(), { timeout: 20_000 }).toBe(6)
    expect(await rowText(rows(three, 'user').nth(1))).toBe('Device two answers')
  })
})
