// Every fenced block of the READMEs is an example that runs, or says why it cannot: `ts` / `tsx`
// blocks are type-checked against the built packages' declarations and run in Node (IndexedDB
// from fake-indexeddb), `sh` blocks run in a temporary directory with the workspace's commands,
// `http` blocks are sent to a real server process and their answers compared. A block of any other
// kind, or one written after a `<!-- docs-test: skip — reason -->` line, is not run; a skip needs
// its reason, and an unmarked block that cannot run fails the suite. New blocks are picked up by
// themselves. Wherever an example names port 8787, it runs on a free port instead (the machine
// may be running other servers).
//
// Directives (`<!-- docs-test: … -->` on the line before a block, `;` between several):
//   skip — <reason>       not run
//   given <names>         ts: values the snippet takes as given, made real (see GIVEN)
//   server <args>         ts, sh, http: run against `colloquy-server <args>` (8787 is its port)
//   servers               sh: each line starts a server; it must answer /health, then it is stopped
//   files <name>=<path>   sh: copy a repository file into the directory first
//   browser               tsx: an app that needs a page; readme-examples.browser.test.tsx runs it
import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { transformSync } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../conformance/http-process.js'
import { ROOT, allBlocks, directiveWords, label, skipReason, type Block } from './readme-blocks.js'

const RUNNABLE = new Set(['ts', 'tsx', 'sh', 'http'])
const blocks = allBlocks()
const runnable = blocks.filter((b) => RUNNABLE.has(b.lang) && skipReason(b) === undefined)
const scripts = runnable.filter((b) => b.lang === 'ts' || b.lang === 'tsx')
const WORK = join(ROOT, 'test', '.docs-test')

describe('README blocks', () => {
  it('are runnable or marked with the reason they cannot run', () => {
    const unmarked = blocks.filter((b) => !RUNNABLE.has(b.lang) && skipReason(b) === undefined).map(label)
    expect(unmarked, 'blocks that neither run nor say why (`<!-- docs-test: skip — reason -->`)').toEqual([])
    const reasonless = blocks
      .filter((b) => skipReason(b) !== undefined && skipReason(b)!.length < 12)
      .map(label)
    expect(reasonless, 'skips without a reason').toEqual([])
    const unknown = blocks
      .filter(
        (b) => b.directive !== undefined && !/^(skip|given|servers|files|server|browser)\b/.test(b.directive),
      )
      .map(label)
    expect(unknown, 'unknown docs-test directives').toEqual([])
  })
})

// ---- TypeScript ----------------------------------------------------------------------------

/** Values a snippet may take as given (`<!-- docs-test: given store, session_id -->`), made real. */
const GIVEN: Record<string, { needs: string[]; code: string }> = {
  store: { needs: [], code: "const store = await (await import('@colloquy/core')).createStore()" },
  session_id: { needs: ['store'], code: "const { session_id } = await store.create({ title: 'Docs' })" },
  entry_id: {
    needs: ['session_id'],
    code: "const { entry_id } = await store.append({ session_id, message: { role: 'assistant', content: [], model: 'm', provider: 'p', stop_reason: 'end', timestamp: 0 } })",
  },
  file: {
    needs: [],
    code: `const file = new Blob([await (await import('node:fs/promises')).readFile(${JSON.stringify(join(ROOT, 'packages/formats/test/fixtures/claude-rewind.jsonl'))})])`,
  },
  stream: { needs: [], code: "const stream = (async function* () { yield 'Sun'; yield 'ny' })()" },
}

function prelude(b: Block): string {
  const wanted = directiveWords(b, 'given') ?? []
  const out: string[] = []
  const add = (name: string): void => {
    const g = GIVEN[name]
    if (!g)
      throw new Error(
        `${label(b)}: nothing named "${name}" can be given (known: ${Object.keys(GIVEN).join(', ')})`,
      )
    g.needs.forEach(add)
    if (!out.includes(g.code)) out.push(g.code)
  }
  wanted.forEach(add)
  return out.join('\n')
}

/** Where a README's snippet runs: beside a package's README (its dependencies resolve there), else in the test workspace. */
function homeOf(b: Block): string {
  return b.file.startsWith('packages/') ? join(ROOT, dirname(b.file), '.docs-test') : WORK
}

const slug = (b: Block): string => `${b.file.replace(/[^a-z0-9]+/gi, '-')}-L${b.line}`
const sourcePath = (b: Block): string => join(homeOf(b), `${slug(b)}.${b.lang}`)

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

interface Run {
  code: number | null
  out: string
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, npm_config_update_notifier: 'false', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    const timer = setTimeout(() => {
      out += `\n[killed after ${options.timeoutMs} ms]`
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        /* gone */
      }
    }, options.timeoutMs)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, out })
    })
  })
}

let diagnostics = new Map<string, string[]>()
// A syntax error in one snippet stops the compiler before it checks any types: the whole run
// must be clean, not only each snippet's own lines.
let compiler: Run = { code: 0, out: '' }

beforeAll(async () => {
  if (!scripts.length) return
  mkdirSync(WORK, { recursive: true })
  for (const b of scripts) {
    mkdirSync(homeOf(b), { recursive: true })
    writeFileSync(sourcePath(b), `${prelude(b)}\n${b.text}\nexport {}\n`)
  }
  // One compiler run for every snippet, each resolving imports from where it sits: the packages'
  // `types` (their built declarations), as an app that installed them would.
  const tsconfig = join(WORK, 'tsconfig.json')
  writeFileSync(
    tsconfig,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        jsx: 'react-jsx',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: ['node'],
        skipLibCheck: true,
      },
      files: scripts.map(sourcePath),
    }),
  )
  const tsc = (compiler = await run(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', tsconfig, '--pretty', 'false'],
    { cwd: ROOT, timeoutMs: 240_000 },
  ))
  diagnostics = new Map()
  for (const line of tsc.out.split('\n')) {
    const m = /^(.*?)\(\d+,\d+\): error /.exec(line)
    if (!m) continue
    const file = join(ROOT, m[1]) // tsc names files relative to its working directory, ROOT
    diagnostics.set(file, [...(diagnostics.get(file) ?? []), line])
  }
}, 300_000)

it('TypeScript snippets compile together without an error', () => {
  expect(compiler.out.trim(), 'tsc').toBe('')
  expect(compiler.code).toBe(0)
})

afterAll(() => {
  if (process.env.DOCS_TEST_KEEP) return // to read the generated files
  rmSync(WORK, { recursive: true, force: true })
  for (const b of scripts) rmSync(homeOf(b), { recursive: true, force: true })
})

describe.each(scripts.map((b) => [label(b), b] as const))('%s', (_name, b) => {
  it('type-checks against the built packages', () => {
    expect(diagnostics.get(sourcePath(b)) ?? []).toEqual([])
  })

  // `browser`: the example needs a page; readme-examples.browser.test.tsx runs it there.
  it.skipIf(directiveWords(b, 'browser') !== undefined)(
    'runs',
    async () => {
      // `server <args>`: the example talks to a real server, started here with those arguments.
      const args = directiveWords(b, 'server')
      const server = args ? await startServer(args) : undefined
      try {
        await runScript(b, server ? new URL(server.url).port : String(await freePort()))
      } finally {
        await server?.stop()
      }
    },
    120_000,
  )
})

async function runScript(b: Block, port: string): Promise<void> {
  const code = `${prelude(b)}\n${b.text.replaceAll('8787', port)}\nexport {}\n`
  const js = transformSync(code, {
    loader: b.lang as 'ts' | 'tsx',
    format: 'esm',
    jsx: 'automatic',
    target: 'es2022',
  }).code
  const file = sourcePath(b).replace(/\.tsx?$/, '.mjs')
  writeFileSync(file, js)
  // The module's top level is the example; once it has run, the process ends (a sync client or a
  // server it left open would keep it alive).
  const main = `await import('fake-indexeddb/auto'); await import(${JSON.stringify(`./${file.split('/').pop()}`)}); process.exit(0)`
  const result = await run(process.execPath, ['--input-type=module', '-e', main], {
    cwd: dirname(file),
    timeoutMs: 60_000,
  })
  expect(result.code, result.out).toBe(0)
}

// ---- shell ---------------------------------------------------------------------------------

const shells = runnable.filter((b) => b.lang === 'sh')

function commands(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'))
}

describe.each(shells.map((b) => [label(b), b] as const))('%s', (_name, b) => {
  it(
    directiveWords(b, 'servers') ? 'starts a server on every line' : 'runs',
    async () => {
      mkdirSync(WORK, { recursive: true })
      // Inside the test workspace: `npx colloquy-server` finds the workspace's command there, as it
      // does at the repository root.
      const cwd = mkdtempSync(join(WORK, 'sh-'))
      try {
        for (const spec of directiveWords(b, 'files') ?? []) {
          const [name, from] = spec.split('=')
          cpSync(join(ROOT, from), join(cwd, name), { recursive: true })
        }
        if (directiveWords(b, 'servers')) {
          for (const line of commands(b.text))
            await serverLine(line.replaceAll('8787', String(await freePort())), cwd)
          return
        }
        // `server <args>`: the commands talk to a real server, started here with those arguments.
        const args = directiveWords(b, 'server')
        const server = args ? await startServer(args) : undefined
        try {
          const text = b.text.replaceAll('8787', server ? new URL(server.url).port : String(await freePort()))
          const result = await run('sh', ['-e', '-c', text], { cwd, timeoutMs: 120_000 })
          expect(result.code, result.out).toBe(0)
        } finally {
          await server?.stop()
        }
      } finally {
        rmSync(cwd, { recursive: true, force: true })
      }
    },
    300_000,
  )
})

/** Starts a command that serves until stopped, waits until it answers `/health`, stops it. */
async function serverLine(line: string, cwd: string): Promise<void> {
  const child = spawn('sh', ['-c', `exec ${line}`], {
    cwd,
    env: { ...process.env, npm_config_update_notifier: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let out = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${line}: not listening after 60 s\n${out}`)), 60_000)
      const seen = (d: Buffer): void => {
        out += d.toString()
        const m = /listening on (http:\/\/\S+)/.exec(out)
        if (m) {
          clearTimeout(timer)
          resolve(m[1])
        }
      }
      child.stdout.on('data', seen)
      child.stderr.on('data', (d: Buffer) => (out += d.toString()))
      void exited.then((code) => {
        clearTimeout(timer)
        reject(new Error(`${line}: exited (${code}) before listening\n${out}`))
      })
    })
    const health = await fetch(new URL('/health', url))
    expect(health.status, line).toBe(200)
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {
      /* gone */
    }
    await exited
  }
}

// ---- HTTP ----------------------------------------------------------------------------------

interface Exchange {
  method: string
  path: string
  headers: Record<string, string>
  body: string
  status: number
  answer: unknown
}

const REQUEST = /^(GET|POST|PUT|DELETE) (\S+)$/

function exchanges(text: string): Exchange[] {
  const lines = text.split('\n')
  const out: Exchange[] = []
  let i = 0
  while (i < lines.length) {
    const start = REQUEST.exec(lines[i].trim())
    if (!start) {
      i++
      continue
    }
    i++
    const headers: Record<string, string> = {}
    for (; i < lines.length && lines[i].trim() !== ''; i++) {
      const [k, ...v] = lines[i].split(':')
      headers[k.trim()] = v.join(':').trim()
    }
    const body: string[] = []
    for (; i < lines.length && !/^\d{3}\b/.test(lines[i]); i++) body.push(lines[i])
    if (i === lines.length) throw new Error(`${start[0]}: no answer line (\`<status> <json>\`)`)
    const answer = /^(\d{3})\s*(.*)$/.exec(lines[i])!
    // The answer's JSON may span lines, up to the next request.
    const json = [answer[2]]
    for (i++; i < lines.length && !REQUEST.test(lines[i].trim()); i++) json.push(lines[i])
    const text = json.join('\n').trim()
    out.push({
      method: start[1],
      path: start[2],
      headers,
      body: body.join('\n').trim(),
      status: Number(answer[1]),
      answer: text ? JSON.parse(text) : undefined,
    })
  }
  return out
}

/** Times vary from run to run: a documented time matches any number. */
const TIMES = new Set(['timestamp', 'created_at', 'updated_at'])

function sameShape(actual: unknown, documented: unknown, key = ''): boolean {
  if (TIMES.has(key) && typeof documented === 'number') return typeof actual === 'number'
  if (Array.isArray(documented))
    return (
      Array.isArray(actual) &&
      actual.length === documented.length &&
      documented.every((d, i) => sameShape(actual[i], d))
    )
  if (documented && typeof documented === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return false
    const a = Object.keys(actual).sort()
    const d = Object.keys(documented).sort()
    return (
      a.join() === d.join() &&
      d.every((k) =>
        sameShape((actual as Record<string, unknown>)[k], (documented as Record<string, unknown>)[k], k),
      )
    )
  }
  return actual === documented
}

const https = runnable.filter((b) => b.lang === 'http')

describe.each(https.map((b) => [label(b), b] as const))('%s', (_name, b) => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer(directiveWords(b, 'server') ?? ['--memory', '--token', 's3cret'])
  })
  afterAll(() => server?.stop())

  it('answers as documented, exchange by exchange', async () => {
    const list = exchanges(b.text)
    expect(list.length).toBeGreaterThan(0)
    for (const x of list) {
      const response = await fetch(new URL(x.path, server.url), {
        method: x.method,
        headers: x.headers,
        body: x.body || undefined,
      })
      const text = await response.text()
      const what = `${x.method} ${x.path} ${x.body}\n→ ${response.status} ${text}`
      expect(response.status, what).toBe(x.status)
      if (x.answer !== undefined) expect(sameShape(JSON.parse(text), x.answer), what).toBe(true)
    }
  }, 120_000)
})
