// The benchmark runner: `pnpm bench [-- ID ...]` (the root script builds the packages first).
// Picks up every test/bench/workloads/*.ts(x) whose default export is a Workload or an array of
// them, runs browser workloads in headless Chromium (a fresh page each, on a real on-disk
// profile) and Node workloads in this process, prints one table and writes results.json.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import os from 'node:os'
import { dirname, extname, join, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build as esbuild } from 'esbuild'
import { chromium } from 'playwright'
import { build as viteBuild } from 'vite'
import { sampleTexts, samplesDir } from './subjects/search-samples.mjs'

const here = dirname(fileURLToPath(import.meta.url))
// BENCH_WORKLOADS runs the workloads of another folder (trying one out); it must sit beside
// workloads/ so its imports resolve the same way.
const workloadsDir = resolve(process.env.BENCH_WORKLOADS ?? join(here, 'workloads'))
const runId = Date.now().toString(36)
// Under test/ so bundles resolve packages exactly as the workload sources do (`dist` is ignored
// by git); one folder per run, so runs by several engineers do not clobber each other's bundles.
const outDir = join(here, 'dist', `run-${runId}-${process.pid}`)
// BENCH_ENGINE=webkit|firefox runs the browser workloads in that engine (Debian's WebKitGTK
// MiniBrowser or firefox-esr, driven as the tests drive them: test/support/engines.ts) and
// writes results-<engine>.json; Chromium's stay in results.json.
/**
 * A workload's settings: the environment variables named after it (`W9_SIZES` for W9), the
 * only ones a page is given.
 */
const settingsOf = (id) =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith(`${id.toUpperCase()}_`)))
const ENGINE = process.env.BENCH_ENGINE ?? 'chromium'
if (!['chromium', 'webkit', 'firefox'].includes(ENGINE))
  throw new Error(`BENCH_ENGINE: unknown engine ${ENGINE} (chromium, webkit, firefox)`)
const resultsFile = join(here, ENGINE === 'chromium' ? 'results.json' : `results-${ENGINE}.json`)
const LOCK = join(os.tmpdir(), 'colloquy-bench.lock')
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 15 * 60_000)
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--enable-precise-memory-info',
  '--js-flags=--expose-gc',
]
const VIRTUAL = 'virtual:bench-workloads'
// The sample transcripts' texts for the page's search corpus (SEARCH_IDB): read here, in Node,
// by the same code as the Node SEARCH workload's, and built into the chunk that imports them.
const SAMPLES = 'virtual:bench-search-samples'
// BENCH_PROFILE=<folder>: each browser workload's run is recorded as a Chromium CPU profile
// (<folder>/<id>.cpuprofile, for Chrome DevTools or any .cpuprofile reader), from a page built
// without minifying so functions keep their names. Profiling slows what it records: never
// report a figure from a profiled run.
const PROFILE_DIR = process.env.BENCH_PROFILE ? resolve(process.env.BENCH_PROFILE) : undefined
const PROFILE_INTERVAL_US = 50

const filters = process.argv
  .slice(2)
  .filter((a) => a !== '--')
  .map((a) => a.toLowerCase())
const selected = (id) => filters.length === 0 || filters.includes(id.toLowerCase())
const log = (m) => console.log(m)
const errorText = (e) =>
  (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).split('\n')[0].slice(0, 400)
const errorRow = (id, subject, e) => ({
  id,
  subject,
  metric: 'error',
  value: NaN,
  unit: '',
  note: errorText(e),
})

function withTimeout(promise, what) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

// ---- discovery ---------------------------------------------------------------------------

/** Bundles one workload file for Node (packages stay external) with page.ts's helpers. */
async function importInNode(file) {
  const outfile = join(outDir, 'node', file.replace(/\.tsx?$/, '.mjs'))
  await esbuild({
    stdin: {
      contents: `export * as mod from ${JSON.stringify(join(workloadsDir, file))}\nexport { workloadsOf, infoOf, context } from ${JSON.stringify(join(here, 'page.ts'))}\n`,
      resolveDir: here,
      loader: 'ts',
      sourcefile: `bench-node-${file}`,
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    jsx: 'automatic',
    outfile,
    logLevel: 'silent',
  })
  return import(`${pathToFileURL(outfile).href}?run=${runId}`)
}

/**
 * Imports every file in Node to learn its workloads' ids and envs. Browser workloads import
 * cleanly in Node (core touches no browser global at import); a file that does not is looked
 * at as text: `env: 'node'` makes it a failed Node workload, anything else goes to the page,
 * which reports its own error if it fails there too.
 */
async function discover() {
  const files = readdirSync(workloadsDir)
    .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
    .sort()
  const found = []
  for (const file of files) {
    try {
      const m = await importInNode(file)
      for (const w of m.workloadsOf(m.mod, file))
        found.push({ file, info: m.infoOf(w), workload: w, helpers: m })
    } catch (e) {
      const isNode = /env\s*:\s*['"]node['"]/.test(readFileSync(join(workloadsDir, file), 'utf8'))
      found.push({ file, failed: e, env: isNode ? 'node' : 'browser' })
    }
  }
  return found
}

// ---- the page ------------------------------------------------------------------------------

const workloadsPlugin = (files) => ({
  name: 'bench-workloads',
  resolveId: (id) => (id === VIRTUAL || id === SAMPLES ? `\0${id}` : undefined),
  load(id) {
    if (id === `\0${SAMPLES}`) return `export default ${JSON.stringify(sampleTexts(samplesDir(here)))}\n`
    if (id !== `\0${VIRTUAL}`) return undefined
    const entries = files.map(
      (f) => `  ${JSON.stringify(f)}: () => import(${JSON.stringify(join(workloadsDir, f))}),`,
    )
    return `export const files = {\n${entries.join('\n')}\n}\n`
  },
})

/** Production build (React and friends in production mode), one lazy chunk per workload file. */
function buildPage(files, dir) {
  return viteBuild({
    configFile: false,
    root: here,
    base: './',
    mode: 'production',
    logLevel: 'error',
    publicDir: false,
    esbuild: { jsx: 'automatic' },
    // RxDB pins its own Dexie patch release, and Dexie refuses to load twice in one page: both
    // baselines run on the Dexie the tests package installs.
    resolve: { dedupe: ['dexie'] },
    plugins: [workloadsPlugin(files)],
    build: {
      outDir: dir,
      emptyOutDir: true,
      minify: !PROFILE_DIR,
      target: 'es2022',
      reportCompressedSize: false,
      chunkSizeWarningLimit: 1e6,
      rollupOptions: { input: join(here, 'page.html') },
    },
  })
}

/** Builds the page; if one file breaks the build, finds it by building files alone, and drops it. */
async function buildPageTolerant(files, dir) {
  try {
    await buildPage(files, dir)
    return { built: files, broken: [] }
  } catch (e) {
    if (files.length === 1) return { built: [], broken: [{ file: files[0], error: e }] }
    const broken = []
    for (const f of files) {
      try {
        await buildPage([f], join(outDir, 'probe'))
      } catch (err) {
        broken.push({ file: f, error: err })
      }
    }
    const good = files.filter((f) => !broken.some((b) => b.file === f))
    if (good.length) await buildPage(good, dir)
    return { built: good, broken }
  }
}

const TYPES = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
}

/** A static server for the built page on 127.0.0.1 (an http://127.0.0.1 origin is secure). */
function serve(dir) {
  const server = createServer((req, res) => {
    const path = resolve(dir, `.${decodeURIComponent(new URL(req.url, 'http://x').pathname)}`)
    if (path !== dir && !path.startsWith(dir + sep)) return void res.writeHead(403).end()
    try {
      const body = readFileSync(path)
      // Cross-origin isolated (COOP + COEP): \`performance.now()\` then ticks in 5 µs steps instead
      // of 100 µs, which W5's sub-millisecond latencies need. Everything the page loads is
      // same-origin, so isolation changes nothing else it does.
      res
        .writeHead(200, {
          'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
          'cache-control': 'no-store',
          'cross-origin-opener-policy': 'same-origin',
          'cross-origin-embedder-policy': 'require-corp',
        })
        .end(body)
    } catch {
      res.writeHead(404).end()
    }
  })
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)))
}

/** Starts Chromium's sampling profiler on `page`; `stop(file)` writes the profile there. */
async function startProfile(page) {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Profiler.enable')
  await cdp.send('Profiler.setSamplingInterval', { interval: PROFILE_INTERVAL_US })
  await cdp.send('Profiler.start')
  return {
    async stop(file) {
      const { profile } = await cdp.send('Profiler.stop')
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, JSON.stringify(profile))
      await cdp.detach().catch(() => {})
      return file
    },
  }
}

/** Runs browser workloads, each in a freshly loaded page; databases are deleted after each. */
async function runBrowser(jobs, listFiles) {
  const rows = []
  const pageDir = join(outDir, 'page')
  const files = [...new Set([...jobs.map((j) => j.file), ...listFiles])]
  log(`building the benchmark page (${files.length} file${files.length === 1 ? '' : 's'})…`)
  const { built, broken } = await buildPageTolerant(files, pageDir)
  for (const b of broken) rows.push(errorRow(b.file, '-', b.error))
  if (!built.length) return { rows }

  const server = await serve(pageDir)
  const url = `http://127.0.0.1:${server.address().port}/page.html`
  if (ENGINE !== 'chromium') {
    try {
      // The rows of files that did not build go with the engine's own.
      const res = await runInEngine(
        jobs,
        listFiles.filter((f) => built.includes(f)),
        built,
        url,
      )
      return { ...res, rows: [...rows, ...res.rows] }
    } finally {
      server.close()
    }
  }
  // A persistent context: Playwright's default contexts are incognito, where IndexedDB lives
  // in memory, and the benchmark must measure the on-disk database a real profile uses.
  const profile = mkdtempSync(join(os.tmpdir(), 'colloquy-bench-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  })
  let page
  const load = async () => {
    const p = await context.newPage()
    p.on('console', (m) => {
      const text = m.text()
      if (text.startsWith('[bench] ')) log(`  ${text.slice(8)}`)
      else if (m.type() === 'error') log(`  [page error] ${text.split('\n')[0].slice(0, 300)}`)
    })
    p.on('pageerror', (e) => log(`  [page exception] ${errorText(e)}`))
    await p.goto(url)
    await p.waitForFunction(() => window.bench !== undefined, undefined, { timeout: 60_000 })
    return p
  }
  const freshPage = async () => {
    if (page && !page.isClosed()) await page.close().catch(() => {})
    return (page = await load())
  }
  /** The job running now: `benchFreshPage` calls an export of its file. */
  let current
  let freshCalls = 0
  // A workload measuring a cold start asks for a page of its own per measurement (a new tab, as
  // a user opening the app): the export `fn` of its own file is called there with `args`, and
  // its result handed back. Its page waits meanwhile.
  await context.exposeBinding('benchFreshPage', async (_source, fn, args) => {
    const p = await load()
    try {
      const profiler = PROFILE_DIR ? await startProfile(p) : undefined
      const got = await p.evaluate(({ file, fn, args }) => window.bench.call(file, fn, args), {
        file: current.file,
        fn,
        args,
      })
      if (profiler)
        log(
          `  CPU profile: ${await profiler.stop(join(PROFILE_DIR, `${current.info.id}-${++freshCalls}.cpuprofile`))}`,
        )
      return got
    } finally {
      await p.close().catch(() => {})
    }
  })
  // Each run as a CPU profile, when asked for.
  const profiled = PROFILE_DIR
    ? async (on, id, run) => {
        const profiler = await startProfile(on)
        const got = await run()
        log(`  CPU profile: ${await profiler.stop(join(PROFILE_DIR, `${id}.cpuprofile`))}`)
        return got
      }
    : undefined
  let chromiumVersion
  try {
    await freshPage()
    chromiumVersion = await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1])
    rows.push(
      ...(await listAndRun(
        page,
        freshPage,
        jobs,
        listFiles.filter((f) => built.includes(f)),
        built,
        profiled,
        (job) => (current = job),
      )),
    )
  } finally {
    await context.close().catch(() => {})
    server.close()
    rmSync(profile, { recursive: true, force: true })
  }
  return { rows, chromiumVersion }
}

/**
 * What every engine does with the benchmark page: asks it (`page`, loaded) for the workloads of
 * the files that did not import in Node (`listed`), then runs each job of a file that built on a
 * page loaded afresh by `fresh()`, through `around` when given, and deletes its databases after.
 */
async function listAndRun(
  page,
  fresh,
  jobs,
  listed,
  built,
  around = (_page, _id, run) => run(),
  started = () => {},
) {
  const rows = []
  for (const file of listed) {
    try {
      const infos = await page.evaluate((f) => window.bench.list(f), file)
      for (const info of infos) if (info.env === 'browser' && selected(info.id)) jobs.push({ file, info })
    } catch (e) {
      rows.push(errorRow(file, '-', e))
    }
  }
  for (const job of jobs) {
    if (!built.includes(job.file)) continue
    log(`${job.info.id}: ${job.info.title}`)
    started(job)
    try {
      const on = await fresh()
      const run = () =>
        withTimeout(
          on.evaluate(({ file, id, run, env }) => window.bench.run(file, id, run, env), {
            file: job.file,
            id: job.info.id,
            run: runId,
            env: settingsOf(job.info.id),
          }),
          job.info.id,
        )
      rows.push(...(await around(on, job.info.id, run)))
    } catch (e) {
      rows.push(errorRow(job.info.id, '-', e))
    }
    try {
      await (await fresh()).evaluate(() => window.bench.cleanup())
    } catch (e) {
      log(`  cleanup failed: ${errorText(e)}`)
    }
  }
  return rows
}

/**
 * The same jobs in WebKit or Gecko through the tests' engine driver (bundled for Node here). One
 * page, loaded afresh for every workload (a navigation is a new realm). Firefox's profile is on
 * disk; WebKit's automation session keeps IndexedDB in memory (it is ephemeral), which its
 * figures must be read with. Files that did not import in Node (`listed`) are asked the page.
 */
async function runInEngine(jobs, listed, built, url) {
  const rows = []
  const driver = join(outDir, 'engines.mjs')
  await esbuild({
    entryPoints: [join(here, '../support/engines.ts')],
    outfile: driver,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'error',
  })
  const { launchEngine } = await import(pathToFileURL(driver).href)
  const browser = await launchEngine(ENGINE)
  try {
    const context = await browser.newContext()
    const page = await context.newPage()
    const fresh = async () => {
      await page.goto(url)
      await page.waitForFunction(() => window.bench !== undefined, 60_000)
      return page
    }
    rows.push(...(await listAndRun(await fresh(), fresh, jobs, listed, built)))
  } finally {
    await browser.close()
  }
  return { rows, chromiumVersion: browser.version }
}

// ---- node workloads --------------------------------------------------------------------------

async function runNode(jobs) {
  const rows = []
  for (const job of jobs) {
    log(`${job.info.id}: ${job.info.title} (node)`)
    try {
      const ctx = job.helpers.context(runId, (m) => log(`  ${m}`), settingsOf(job.info.id))
      rows.push(...(await withTimeout(job.workload.run(ctx), job.info.id)))
    } catch (e) {
      rows.push(errorRow(job.info.id, '-', e))
    }
  }
  return rows
}

// ---- report --------------------------------------------------------------------------------

function withRatios(rows) {
  for (const r of rows) {
    if (!r.baseline) continue
    const base = rows.find((b) => b.id === r.id && b.metric === r.metric && b.subject === r.baseline)
    if (base && Number.isFinite(r.value) && Number.isFinite(base.value) && base.value !== 0)
      r.ratio = r.value / base.value
  }
  return rows
}

const num = (v) =>
  !Number.isFinite(v)
    ? '-'
    : Math.abs(v) >= 1000
      ? Math.round(v).toLocaleString('en-US')
      : Math.abs(v) >= 100
        ? v.toFixed(0)
        : Math.abs(v) >= 10
          ? v.toFixed(1)
          : v.toPrecision(3)

function table(rows) {
  const head = ['id', 'subject', 'metric', 'value', 'vs baseline', 'target', 'ok']
  const body = rows.map((r) => [
    r.id,
    r.subject,
    r.metric,
    r.metric === 'error' ? 'ERROR' : `${num(r.value)} ${r.unit}`,
    r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x ${r.baseline}`,
    r.target ?? '',
    r.pass === undefined ? '' : r.pass ? 'yes' : 'NO',
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)))
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  const out = [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)]
  const notes = rows
    .filter((r) => r.note)
    .map((r) => `- ${r.id} ${r.subject}${r.metric === 'error' ? '' : ` (${r.metric})`}: ${r.note}`)
  return `${out.join('\n')}\n\nNotes:\n${notes.join('\n')}`
}

// ---- main ----------------------------------------------------------------------------------

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * One benchmark at a time on this machine: two runs sharing two cores would measure each other.
 * A lock file holding the owner's pid; a lock whose owner died is taken over.
 */
async function lock() {
  for (let waited = 0; ; waited++) {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: 'wx' })
      return () => rmSync(LOCK, { force: true })
    } catch {
      const owner = Number(readFileSync(LOCK, 'utf8').trim())
      if (!owner || !alive(owner)) {
        rmSync(LOCK, { force: true })
        continue
      }
      if (waited % 30 === 0) log(`waiting for another benchmark run (pid ${owner}) to finish…`)
      await new Promise((r) => setTimeout(r, 2000))
    }
  }
}

/** A filtered run keeps the previous results of the workloads it did not run. */
function merge(rows) {
  if (!filters.length) return rows
  try {
    const previous = JSON.parse(readFileSync(resultsFile, 'utf8'))
    const ran = new Set(rows.map((r) => r.id))
    const kept = previous.rows
      .filter((r) => !ran.has(r.id))
      .map((r) => ({ ...r, date: r.date ?? previous.date }))
    return [...kept, ...rows]
  } catch {
    return rows
  }
}

const unlock = await lock()
process.on('exit', unlock)
const started = new Date()
const load0 = os.loadavg()
mkdirSync(outDir, { recursive: true })
const rows = []
let chromiumVersion
try {
  const found = await discover()
  for (const f of found) if (f.failed && f.env === 'node') rows.push(errorRow(f.file, '-', f.failed))
  const nodeJobs = found.filter((f) => f.info?.env === 'node' && selected(f.info.id))
  const browserJobs = found.filter((f) => f.info?.env === 'browser' && selected(f.info.id))
  const unknownBrowserFiles = found.filter((f) => f.failed && f.env === 'browser').map((f) => f.file)
  if (!nodeJobs.length && !browserJobs.length && !unknownBrowserFiles.length)
    log(`no workload matches ${filters.join(' ')}`)
  if (browserJobs.length || unknownBrowserFiles.length) {
    const res = await runBrowser(browserJobs, unknownBrowserFiles)
    rows.push(...res.rows)
    chromiumVersion = res.chromiumVersion
  }
  rows.push(...(await runNode(nodeJobs)))
} finally {
  rmSync(outDir, { recursive: true, force: true })
}
withRatios(rows)

const cpus = os.cpus()
let chromiumBinary
try {
  if (ENGINE !== 'chromium') throw new Error('another engine')
  chromiumBinary = execFileSync(CHROMIUM, ['--version'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim()
} catch {
  chromiumBinary = undefined
}
const results = {
  date: started.toISOString(),
  duration_s: Math.round((Date.now() - started.getTime()) / 1000),
  filter: filters.length ? filters : undefined,
  machine: {
    cores: cpus.length,
    cpu: cpus[0]?.model,
    memory_gb: +(os.totalmem() / 2 ** 30).toFixed(1),
    loadavg_start: load0.map((l) => +l.toFixed(2)),
    loadavg_end: os.loadavg().map((l) => +l.toFixed(2)),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    engine: ENGINE,
    chromium: chromiumBinary ?? chromiumVersion,
  },
  rows: merge(rows),
}
const tmp = `${resultsFile}.tmp`
writeFileSync(
  tmp,
  `${JSON.stringify(results, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`,
)
renameSync(tmp, resultsFile)

log(
  `\nColloquy benchmarks, ${results.date}, ${results.machine.cores} cores, ${results.machine.memory_gb} GB, ${results.machine.chromium ?? 'Chromium ?'}, load ${load0.map((l) => l.toFixed(2)).join(' ')} (shared machine: compare ratios, not absolute times)\n`,
)
log(table(rows))
log(
  `\nwritten to ${resultsFile}${filters.length ? ' (rows of workloads not run this time kept from before)' : ''}`,
)
