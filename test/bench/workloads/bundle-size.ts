import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build, type Metafile } from 'esbuild'
import type { BenchRow, Workload } from '../types.js'

/** The dependencies @colloquy/core imports; "own code" leaves them out. */
const DEPENDENCIES = ['idb', 'rxjs', 'nanoid']
const KB = 1000

interface Size {
  min: number
  gzip: number
  /** With splitting: the startup files each gzipped on their own, summed; and every file. */
  files?: { count: number; gzipSum: number; all: number; allGzip: number }
}

const gz = (code: Uint8Array): number => gzipSync(code, { level: 9 }).length

/** Minified, tree-shaken ESM bundle of `source` (module text), and its gzip size (level 9). */
async function measure(source: string, external: string[]): Promise<Size> {
  const out = await build({
    stdin: { contents: source, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external,
    write: false,
    logLevel: 'silent',
  })
  const code = out.outputFiles[0]!.contents
  return { min: code.length, gzip: gz(code) }
}

/**
 * What an app loads at start: `source` bundled with code splitting, so what the store fetches on
 * first use (`import()`) lands in chunks of its own; the entry chunk and every chunk it imports
 * statically are the startup code. Their gzip is taken together (one startup chunk, as Rollup and
 * Vite emit it; esbuild splits shared code finer), the per-file sum is in `files`.
 */
async function measureStartup(source: string, external: string[]): Promise<Size> {
  const out = await build({
    stdin: { contents: source, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external,
    write: false,
    logLevel: 'silent',
    splitting: true,
    outdir: '/virtual',
    metafile: true,
  })
  const code = new Map(out.outputFiles.map((f) => [f.path, f.contents]))
  const outputs: Metafile['outputs'] = out.metafile.outputs
  const startup = new Set<string>()
  const walk = (file: string): void => {
    if (startup.has(file)) return
    startup.add(file)
    for (const i of outputs[file]!.imports) if (i.kind === 'import-statement' && !i.external) walk(i.path)
  }
  // Chunks fetched by import() are entry points too; the app's is the one built from stdin.
  const entry = Object.keys(outputs).find((f) => outputs[f]!.entryPoint === '<stdin>')!
  walk(entry)
  const parts = [...startup].map((f) => code.get(resolve(f))!)
  const joined = Buffer.concat(parts)
  const every = [...code.values()]
  return {
    min: joined.length,
    gzip: gz(joined),
    files: {
      count: parts.length,
      gzipSum: parts.reduce((n, c) => n + gz(c), 0),
      all: every.length,
      allGzip: every.reduce((n, c) => n + gz(c), 0),
    },
  }
}

/** The app of the bundle target: it opens a store, appends, streams an update, renders a transcript. */
const chatApp = (entry: string): string => `
import { createStore } from ${entry}
const store = await createStore()
const { entry_id } = await store.append({ session_id: 's', message: { role: 'assistant', content: [], timestamp: 0 } })
await store.updateMessage({ session_id: 's', entry_id, content: [{ type: 'text', text: 'hi' }] })
store.messages$({ session_id: 's' }).subscribe((items) => console.log(items))
`

/**
 * Bundle size of @colloquy/core as an app pays for it, from its built `dist/`, minified by
 * esbuild: (a) the whole public API with idb, rxjs and nanoid external (Colloquy's own code,
 * everything the store may fetch later included) and (b) with them bundled; then what an app
 * loads at start (code splitting on): (c) one that imports `createStore` and
 * `indexedDbStorage`, (d) one that uses only `createStore`, `append`, `updateMessage` and
 * `messages$`, own code and (e) with its dependencies. The targets (own code ≤ 10 kB, ≤ 22 kB with
 * the parts of idb and rxjs it pulls in) apply to what an app loads at start: (d) and (e).
 */
const bundle: Workload = {
  id: 'bundle',
  title: '@colloquy/core bundle size (esbuild, min+gzip)',
  env: 'node',
  async run() {
    const entry = JSON.stringify(fileURLToPath(import.meta.resolve('@colloquy/core')))
    const own = await measure(`export * from ${entry}`, DEPENDENCIES)
    const all = await measure(`export * from ${entry}`, [])
    const store = await measureStartup(`export { createStore, indexedDbStorage } from ${entry}`, DEPENDENCIES)
    const app = await measureStartup(chatApp(entry), DEPENDENCIES)
    const appAll = await measureStartup(chatApp(entry), [])
    // The search entry point as an app pays for it on top of the store (one bundle, no splitting).
    const searchEntry = JSON.stringify(fileURLToPath(import.meta.resolve('@colloquy/core/search')))
    const withSearch = `${chatApp(entry)}
import { enableSearch } from ${searchEntry}
const search = await enableSearch(store)
search.query$({ query: 'postgr' }).subscribe((r) => console.log(r.hits))
`
    const base = await measure(chatApp(entry), DEPENDENCIES)
    const searching = await measure(withSearch, DEPENDENCIES)
    const split = (m: Size): string =>
      m.files
        ? `; ${m.files.count} startup files, ${(m.files.gzipSum / KB).toFixed(1)} kB gzipped one by one; ${m.files.all} files in all, ${(m.files.allGzip / KB).toFixed(1)} kB`
        : ''
    const row = (metric: string, m: Size, limit: number | undefined, note: string): BenchRow => ({
      id: 'bundle',
      subject: '@colloquy/core',
      metric,
      value: m.gzip / KB,
      unit: 'kB',
      better: 'lower',
      ...(limit !== undefined && { target: `<= ${limit} kB`, pass: m.gzip <= limit * KB }),
      note: `${(m.min / KB).toFixed(1)} kB minified; ${note}${split(m)}`,
    })
    return [
      row(
        'own code, min+gzip',
        own,
        undefined,
        `the whole public API, what the store fetches on first use included, ${DEPENDENCIES.join(', ')} external`,
      ),
      row(
        'with idb+rxjs+nanoid, min+gzip',
        all,
        undefined,
        `dependencies add ${((all.gzip - own.gzip) / KB).toFixed(1)} kB gzip`,
      ),
      row(
        'own code at start, createStore + indexedDbStorage',
        store,
        undefined,
        'an app that imports only these (code splitting on)',
      ),
      row(
        'own code at start, chat app',
        app,
        10,
        'an app using only createStore, append, updateMessage and messages$ (code splitting on)',
      ),
      {
        id: 'bundle',
        subject: '@colloquy/core/search',
        metric: 'search entry on top of the chat app, min+gzip',
        value: (searching.gzip - base.gzip) / KB,
        unit: 'kB',
        better: 'lower',
        note: `${((searching.min - base.min) / KB).toFixed(1)} kB minified: enableSearch + query$ added to the chat app, both bundled whole (no splitting), ${DEPENDENCIES.join(', ')} external; no dependency of its own`,
      },
      row(
        'chat app at start, with idb+rxjs+nanoid',
        appAll,
        22,
        `dependencies add ${((appAll.gzip - app.gzip) / KB).toFixed(1)} kB gzip`,
      ),
    ]
  },
}

export default bundle
