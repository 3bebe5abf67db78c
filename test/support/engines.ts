import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import {
  chromium,
  type Browser as PlaywrightBrowser,
  type BrowserContext as PlaywrightContext,
  type Page as PlaywrightPage,
} from 'playwright'
import { createRequire } from 'node:module'
import { watchPageErrors } from './page-errors.js'

// The three browser engines the tests run in, each from the machine's own packages and driven
// by the protocol it speaks: Chromium through Playwright (CDP), WebKit (WebKitGTK's MiniBrowser)
// through WebKitWebDriver over classic W3C WebDriver, Gecko (firefox-esr) over WebDriver BiDi.
// Playwright drives only its own WebKit and Firefox builds, which are downloads; these are
// Debian's. One small surface (contexts with their own storage, pages, evaluate) over all three
// keeps every multi-page test engine-agnostic.

export type EngineName = 'chromium' | 'webkit' | 'firefox'
export const ENGINES: readonly EngineName[] = ['chromium', 'webkit', 'firefox']

export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]
export const WEBKIT_DRIVER = '/usr/bin/WebKitWebDriver'
export const MINIBROWSER = '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser'
export const FIREFOX = '/usr/bin/firefox-esr'

export interface EnginePage {
  goto(url: string): Promise<void>
  /** Runs `fn(arg)` in the page and resolves with its (awaited, JSON-serializable) result. */
  evaluate<T, A = undefined>(fn: (arg: A) => T | Promise<T>, arg?: A): Promise<T>
  /** Resolves once `fn()` returns something truthy in the page. */
  waitForFunction(fn: () => unknown, timeoutMs?: number): Promise<void>
  /**
   * Makes this the tab in front. Gecko runs the timers of a tab behind another at most once a
   * second; a test that times work in a page brings it forward first.
   */
  bringToFront(): Promise<void>
  close(): Promise<void>
}

/** One user's storage: pages of one context share IndexedDB, locks and channels; contexts do not. */
export interface EngineContext {
  newPage(): Promise<EnginePage>
  /**
   * Takes the context's pages off the network and back: `navigator.onLine`, the `offline` and
   * `online` events, and requests failing meanwhile. Chromium and Gecko emulate it in the
   * browser; classic WebDriver has no such command, so in WebKit the pages open now get the
   * same three things from a script (requests fail in `fetch` as Safari's do: TypeError).
   */
  setOffline(offline: boolean): Promise<void>
  close(): Promise<void>
}

export interface EngineBrowser {
  readonly engine: EngineName
  /** The browser's own name and version, as it reports them. */
  readonly version: string
  newContext(): Promise<EngineContext>
  close(): Promise<void>
}

export interface LaunchOptions {
  /**
   * Gecko only: the storage each site may use, in MiB (Firefox gives a site a fifth of its
   * temporary storage limit). For tests that fill a quota; the default is the browser's own.
   */
  siteQuotaMiB?: number
}

export function launchEngine(engine: EngineName, options: LaunchOptions = {}): Promise<EngineBrowser> {
  if (engine === 'chromium') return launchChromiumEngine()
  if (engine === 'webkit') return launchWebKit()
  return launchFirefox(options)
}

/** The engines a run covers: all three, or those named in COLLOQUY_ENGINES (comma-separated). */
export function enginesUnderTest(): EngineName[] {
  const named = process.env.COLLOQUY_ENGINES?.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (!named?.length) return [...ENGINES]
  for (const n of named)
    if (!ENGINES.includes(n as EngineName))
      throw new Error(`COLLOQUY_ENGINES: unknown engine "${n}" (known: ${ENGINES.join(', ')})`)
  return named as EngineName[]
}

// Loaded by file: the test config resolves the `browser` export condition first (for the
// packages' sources), which would give ws's browser stub instead of the Node client.
const requireHere = createRequire(import.meta.url)
const WebSocket = requireHere(
  join(dirname(requireHere.resolve('ws/package.json')), 'index.js'),
) as typeof import('ws').default

// --- Evaluation, the same for the two engines driven through a script string ---------------

/**
 * The page-side source that runs `fn(arg)` and settles to `{ ok: json }` or `{ err: message }`.
 * The result is serialized inside the same chain the error handler covers: a result JSON cannot
 * hold (a DOM node, a cycle, a BigInt) is an error too, never an evaluation that never settles.
 */
function settleSource<A>(fn: (arg: A) => unknown, arg: A | undefined): string {
  return (
    `(async () => (${fn.toString()})(JSON.parse(${JSON.stringify(JSON.stringify(arg ?? null))})))()` +
    `.then((v) => ({ ok: JSON.stringify(v === undefined ? null : v) }))` +
    `.catch((e) => ({ err: String(e && e.stack ? (e.name + ': ' + e.message + '\\n' + e.stack) : e) }))`
  )
}

function settled<T>(r: { ok?: string; err?: string }): T {
  if (r.err !== undefined) throw new Error(`in page: ${r.err}`)
  return JSON.parse(r.ok!) as T
}

async function pollUntil(what: string, check: () => Promise<unknown>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

// --- Processes ---------------------------------------------------------------------------

const children = new Set<ChildProcess>()
/** Ends a child and everything it started (its process group: MiniBrowser, content processes). */
const killGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
  try {
    process.kill(-child.pid!, signal)
  } catch {
    // already gone
  }
}
process.once('exit', () => {
  for (const c of children) killGroup(c, 'SIGKILL')
})

/**
 * Starts `cmd` in a process group of its own, watched: a test worker may be ended without its
 * `exit` handlers running, and a browser or Xvfb must not outlive it. The watchdog (a shell
 * loop) ends the group once this process is gone.
 */
function start(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, fds = 3): ChildProcess {
  const child = spawn(cmd, args, {
    env,
    detached: true,
    stdio: Array.from({ length: fds }, (_, i) => (i === 0 ? 'ignore' : 'pipe')),
  })
  children.add(child)
  spawn(
    'sh',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${child.pid} 2>/dev/null; do sleep 1; done; kill -TERM -${child.pid} 2>/dev/null; sleep 3; kill -KILL -${child.pid} 2>/dev/null`,
    ],
    {
      detached: true,
      stdio: 'ignore',
    },
  ).unref()
  child.once('exit', () => {
    children.delete(child)
    // Its own children (a browser's content processes) may hold the pipes open past its exit.
    for (const s of child.stdio) (s as { destroy?: () => void } | null)?.destroy?.()
  })
  return child
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise((r) => child.once('exit', r))
  killGroup(child, 'SIGTERM')
  const t = setTimeout(() => killGroup(child, 'SIGKILL'), 5000)
  await gone
  clearTimeout(t)
}

/** Resolves with the first match of `re` in what `child` writes on `stream`, or rejects if it exits first. */
function readUntil(
  child: ChildProcess,
  stream: 'stdout' | 'stderr' | number,
  re: RegExp,
  what: string,
): Promise<RegExpMatchArray> {
  const s = typeof stream === 'number' ? (child.stdio[stream] as NodeJS.ReadableStream) : child[stream]!
  return new Promise((resolve, reject) => {
    let seen = ''
    const onData = (d: Buffer) => {
      seen += d.toString()
      const m = seen.match(re)
      if (m) {
        s.off('data', onData)
        child.off('exit', onExit)
        resolve(m)
      }
    }
    const onExit = (code: number | null) =>
      reject(new Error(`${what} exited (${code}) before it was ready: ${seen.slice(-2000)}`))
    s.on('data', onData)
    child.once('exit', onExit)
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

let display: Promise<string> | undefined
/** An X display for MiniBrowser: $DISPLAY if set, else an Xvfb of this process's own (`-displayfd` picks a free one). */
export function xDisplay(): Promise<string> {
  if (process.env.DISPLAY) return Promise.resolve(process.env.DISPLAY)
  display ??= (async () => {
    const xvfb = start(
      'Xvfb',
      ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'],
      process.env,
      4,
    )
    const [, n] = await readUntil(xvfb, 3, /(\d+)\n/, 'Xvfb')
    // Xvfb serves this process until it exits (and is killed then); it must not keep it alive.
    for (const s of xvfb.stdio) (s as { destroy?: () => void } | null)?.destroy?.()
    xvfb.unref()
    return `:${n}`
  })()
  return display
}

// --- Chromium (Playwright) -------------------------------------------------------------

/** A Playwright page as the device calls drive it (for a test that launches Chromium itself). */
export const playwrightPage = (p: PlaywrightPage): EnginePage => ({
  goto: async (url) => void (await p.goto(url)),
  evaluate: async (fn, arg) => ((await p.evaluate(fn as never, arg)) ?? null) as never,
  waitForFunction: async (fn, timeoutMs = 30_000) =>
    void (await p.waitForFunction(fn, undefined, { timeout: timeoutMs })),
  bringToFront: () => p.bringToFront(),
  close: () => p.close(),
})

async function launchChromiumEngine(): Promise<EngineBrowser> {
  const browser: PlaywrightBrowser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  const page = playwrightPage
  return {
    engine: 'chromium',
    version: `Chromium ${browser.version()}`,
    async newContext() {
      const ctx: PlaywrightContext = await browser.newContext()
      // A page error fails the test whose hooks close the context (WebDriver gives no such event).
      const pageErrors = watchPageErrors(ctx)
      return {
        newPage: async () => page(await ctx.newPage()),
        setOffline: (offline) => ctx.setOffline(offline),
        close: async () => {
          await ctx.close()
          pageErrors()
        },
      }
    },
    close: () => browser.close(),
  }
}

// --- WebKit (WebKitWebDriver, classic WebDriver) -----------------------------------------

async function launchWebKit(): Promise<EngineBrowser> {
  const DISPLAY = await xDisplay()
  let version = 'WebKitGTK'
  const contexts = new Set<EngineContext>()

  // A context is a WebDriver session: a MiniBrowser of its own, with its own (ephemeral) storage.
  // WebKitWebDriver holds one session at a time, so each context has a driver of its own.
  async function newContext(): Promise<EngineContext> {
    const port = await freePort()
    const driver = start(WEBKIT_DRIVER, [`--port=${port}`], { ...process.env, DISPLAY })
    const base = `http://127.0.0.1:${port}`
    const wd = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(base + path, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const json = (await res.json()) as { value: T & { error?: string; message?: string } }
      if (!res.ok)
        throw new Error(`WebDriver ${method} ${path}: ${json.value?.error}: ${json.value?.message}`)
      return json.value
    }
    await pollUntil(
      'WebKitWebDriver',
      () =>
        wd<{ ready: boolean }>('GET', '/status').then(
          (st) => st.ready,
          () => false,
        ),
      20_000,
    )
    const session = await wd<{
      sessionId: string
      capabilities: { browserName: string; browserVersion: string }
    }>('POST', '/session', {
      capabilities: {
        alwaysMatch: { 'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] } },
      },
    })
    version = `${session.capabilities.browserName} (WebKitGTK) ${session.capabilities.browserVersion}`
    const s = `/session/${session.sessionId}`
    await wd('POST', `${s}/timeouts`, { script: 30_000, pageLoad: 120_000 })
    // WebDriver runs commands against one current window; a queue keeps the switch and the
    // command together. Long evaluations are started and then polled, so two pages' work runs
    // at once in the browser as it would in two tabs.
    let queue: Promise<unknown> = Promise.resolve()
    let current = await wd<string>('GET', `${s}/window`)
    let initialFree = true
    const inWindow = <T>(handle: string, cmd: () => Promise<T>): Promise<T> => {
      const run = queue.then(async () => {
        if (current !== handle) {
          await wd('POST', `${s}/window`, { handle })
          current = handle
        }
        return cmd()
      })
      queue = run.catch(() => undefined)
      return run
    }
    let evals = 0
    const pages: EnginePage[] = []
    const ctx: EngineContext = {
      async newPage() {
        let handle: string
        if (initialFree) {
          initialFree = false
          handle = current
        } else {
          handle = (
            await inWindow(current, () => wd<{ handle: string }>('POST', `${s}/window/new`, { type: 'tab' }))
          ).handle
        }
        const page: EnginePage = {
          goto: (url) => inWindow(handle, () => wd('POST', `${s}/url`, { url })).then(() => undefined),
          async evaluate(fn, arg) {
            const id = ++evals
            await inWindow(handle, () =>
              wd('POST', `${s}/execute/sync`, {
                script: `(window.__colloquyEval ??= {})[${id}] = undefined; ${settleSource(fn, arg)}.then((r) => { window.__colloquyEval[${id}] = r }); return null`,
                args: [],
              }),
            )
            let result: { ok?: string; err?: string } | null = null
            await pollUntil(
              'an evaluation in WebKit',
              async () => {
                result = await inWindow(handle, () =>
                  wd<{ ok?: string; err?: string } | null>('POST', `${s}/execute/sync`, {
                    script: `const r = window.__colloquyEval?.[${id}]; if (r) delete window.__colloquyEval[${id}]; return r ?? null`,
                    args: [],
                  }),
                )
                return result
              },
              600_000,
            )
            return settled(result!)
          },
          waitForFunction: (fn, timeoutMs = 30_000) =>
            pollUntil(
              'a condition in WebKit',
              () =>
                inWindow(handle, () =>
                  wd('POST', `${s}/execute/sync`, { script: `return !!(${fn.toString()})()`, args: [] }),
                ),
              timeoutMs,
            ),
          // Each context is a MiniBrowser window of its own: switching to the tab brings it forward.
          bringToFront: () => inWindow(handle, async () => undefined),
          close: () => {
            pages.splice(pages.indexOf(page), 1)
            return inWindow(handle, () => wd('DELETE', `${s}/window`)).then(() => undefined)
          },
        }
        pages.push(page)
        return page
      },
      async setOffline(offline) {
        for (const page of pages) {
          await page.evaluate((off: boolean) => {
            const w = window as unknown as { __colloquyFetch?: typeof fetch; __colloquyOffline?: boolean }
            if (!w.__colloquyFetch) {
              const real = (w.__colloquyFetch = window.fetch.bind(window))
              Object.defineProperty(Navigator.prototype, 'onLine', {
                configurable: true,
                get: () => !w.__colloquyOffline,
              })
              window.fetch = (...a: Parameters<typeof fetch>) =>
                w.__colloquyOffline ? Promise.reject(new TypeError('Load failed')) : real(...a)
            }
            w.__colloquyOffline = off
            window.dispatchEvent(new Event(off ? 'offline' : 'online'))
          }, offline)
        }
      },
      async close() {
        if (!contexts.delete(ctx)) return
        await wd('DELETE', s).catch(() => undefined)
        await stop(driver)
      },
    }
    contexts.add(ctx)
    return ctx
  }

  // The version is known once a session exists; a first context tells it.
  const probe = await newContext()
  await probe.close()
  return {
    engine: 'webkit',
    version,
    newContext,
    async close() {
      for (const c of [...contexts]) await c.close()
    },
  }
}

// --- Gecko (firefox-esr, WebDriver BiDi) -------------------------------------------------

type BidiEvent = { method: string; params: Record<string, unknown> }

async function launchFirefox(options: LaunchOptions): Promise<EngineBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'colloquy-firefox-'))
  // A quiet profile: no first-run pages, updates, telemetry or background fetches.
  writeFileSync(
    join(profile, 'user.js'),
    [
      ['browser.shell.checkDefaultBrowser', false],
      ['browser.startup.homepage_override.mstone', '"ignore"'],
      ['browser.startup.page', 0],
      ['datareporting.policy.dataSubmissionEnabled', false],
      ['toolkit.telemetry.reportingpolicy.firstRun', false],
      ['app.update.disabledForTesting', true],
      ['browser.aboutwelcome.enabled', false],
      ['network.captive-portal-service.enabled', false],
      ['browser.safebrowsing.update.enabled', false],
      ['extensions.update.enabled', false],
      ['browser.newtabpage.enabled', false],
      ['dom.disable_open_during_load', false],
      // navigator.storage.persist() asks the user with a prompt nobody answers here: answered "allow".
      ['dom.storageManager.prompt.testing', true],
      ['dom.storageManager.prompt.testing.allow', true],
      // A small disk for quota tests (in KiB, five sites' worth).
      ...(options.siteQuotaMiB
        ? [['dom.quotaManager.temporaryStorage.fixedLimit', options.siteQuotaMiB * 5 * 1024]]
        : []),
    ]
      .map(([k, v]) => `user_pref("${k}", ${v});`)
      .join('\n'),
  )
  const firefox = start(FIREFOX, [
    '--headless',
    '--no-remote',
    '--profile',
    profile,
    '--remote-debugging-port=0',
  ])
  const [, wsUrl] = await readUntil(
    firefox,
    'stderr',
    /WebDriver BiDi listening on (ws:\/\/\S+)/,
    'firefox-esr',
  )
  const ws = new WebSocket(`${wsUrl}/session`)
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  let nextId = 0
  const pending = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void }>()
  const listeners = new Set<(e: BidiEvent) => void>()
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as {
      id?: number
      type: string
      result?: unknown
      error?: string
      message?: string
    } & BidiEvent
    if (msg.type === 'event') for (const l of listeners) l(msg)
    else if (msg.id !== undefined) {
      const p = pending.get(msg.id)
      pending.delete(msg.id)
      if (msg.type === 'success') p?.resolve(msg.result as never)
      else p?.reject(new Error(`BiDi: ${msg.error}: ${msg.message}`))
    }
  })
  const bidi = <T>(method: string, params: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++nextId
      pending.set(id, { resolve: resolve as (v: never) => void, reject })
      ws.send(JSON.stringify({ id, method, params }))
    })
  const session = await bidi<{ capabilities: { browserName: string; browserVersion: string } }>(
    'session.new',
    { capabilities: {} },
  )
  await bidi('session.subscribe', { events: ['log.entryAdded'] })
  listeners.add((e) => {
    if (e.method === 'log.entryAdded' && e.params.type === 'javascript')
      console.error('page error:', e.params.text)
  })
  const contexts = new Set<EngineContext>()

  return {
    engine: 'firefox',
    version: `${session.capabilities.browserName} ${session.capabilities.browserVersion}`,
    async newContext() {
      // A BiDi user context: its own cookies and storage, as a separate profile would have.
      const { userContext } = await bidi<{ userContext: string }>('browser.createUserContext')
      const ctx: EngineContext = {
        async newPage() {
          const { context } = await bidi<{ context: string }>('browsingContext.create', {
            type: 'tab',
            userContext,
          })
          const call = async <T>(fn: (arg: never) => unknown, arg: unknown): Promise<T> => {
            const r = await bidi<{
              type: string
              result?: { type: string; value?: unknown }
              exceptionDetails?: { text: string }
            }>('script.evaluate', {
              expression: settleSource(fn as (a: unknown) => unknown, arg),
              target: { context },
              awaitPromise: true,
              resultOwnership: 'none',
            })
            if (r.type === 'exception') throw new Error(`in page: ${r.exceptionDetails?.text}`)
            const props = (r.result?.value ?? []) as [string, { value: string }][]
            return settled<T>(Object.fromEntries(props.map(([k, v]) => [k, v.value])))
          }
          return {
            goto: (url) =>
              bidi('browsingContext.navigate', { context, url, wait: 'complete' }).then(() => undefined),
            evaluate: (fn, arg) => call(fn as never, arg),
            waitForFunction: (fn, timeoutMs = 30_000) =>
              pollUntil('a condition in Firefox', () => call(fn as never, undefined), timeoutMs),
            bringToFront: () => bidi('browsingContext.activate', { context }).then(() => undefined),
            close: () => bidi('browsingContext.close', { context }).then(() => undefined),
          }
        },
        async setOffline(offline) {
          await bidi('emulation.setNetworkConditions', {
            networkConditions: offline ? { type: 'offline' } : null,
            userContexts: [userContext],
          })
        },
        async close() {
          if (!contexts.delete(ctx)) return
          await bidi('browser.removeUserContext', { userContext }).catch(() => undefined)
        },
      }
      contexts.add(ctx)
      return ctx
    },
    async close() {
      for (const c of [...contexts]) await c.close()
      await bidi('browser.close').catch(() => undefined)
      ws.close()
      await stop(firefox)
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
