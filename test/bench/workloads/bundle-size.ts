import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import type { BenchRow, Workload } from '../types.js'

/** The dependencies @colloquy/core imports; "own code" leaves them out. */
const DEPENDENCIES = ['idb', 'rxjs', 'nanoid']
const KB = 1000

/** Minified, tree-shaken ESM bundle of what `exports` (module source) re-exports, and its gzip size (level 9). */
async function measure(exports: string, external: string[]): Promise<{ min: number; gzip: number }> {
  const out = await build({
    stdin: { contents: exports, resolveDir: process.cwd(), loader: 'js' },
    bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', external, write: false, logLevel: 'silent',
  })
  const code = out.outputFiles[0]!.contents
  return { min: code.length, gzip: gzipSync(code, { level: 9 }).length }
}

/**
 * Bundle size of @colloquy/core as an app pays for it: its built `dist/index.js` bundled and
 * minified with esbuild, (a) with idb, rxjs and nanoid left external (Colloquy's own code) and
 * (b) with everything bundled, tree-shaken to the parts core actually uses; (c), for reference,
 * own code when an app imports only `createStore` and `indexedDbStorage`.
 */
const bundle: Workload = {
  id: 'bundle',
  title: '@colloquy/core bundle size (esbuild, min+gzip)',
  env: 'node',
  async run() {
    const entry = JSON.stringify(fileURLToPath(import.meta.resolve('@colloquy/core')))
    const own = await measure(`export * from ${entry}`, DEPENDENCIES)
    const all = await measure(`export * from ${entry}`, [])
    // What an app that only opens a store pays: the rest of the API (replication, imports) shakes off.
    const app = await measure(`export { createStore, indexedDbStorage } from ${entry}`, DEPENDENCIES)
    const row = (metric: string, m: { min: number; gzip: number }, limit: number | undefined, note: string): BenchRow => ({
      id: 'bundle', subject: '@colloquy/core', metric, value: m.gzip / KB, unit: 'kB', better: 'lower',
      ...(limit !== undefined && { target: `<= ${limit} kB`, pass: m.gzip <= limit * KB }),
      note: `${(m.min / KB).toFixed(1)} kB minified; ${note}`,
    })
    return [
      row('own code, min+gzip', own, 10, `the whole public API, ${DEPENDENCIES.join(', ')} external`),
      row('with idb+rxjs+nanoid, min+gzip', all, 22, `dependencies add ${((all.gzip - own.gzip) / KB).toFixed(1)} kB gzip`),
      row('own code for createStore + indexedDbStorage only', app, undefined, 'what tree-shaking leaves to an app that imports only these'),
    ]
  },
}

export default bundle
