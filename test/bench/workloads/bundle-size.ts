import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import type { BenchRow, Workload } from '../types.js'

/** The dependencies @colloquy/core imports; "own code" leaves them out. */
const DEPENDENCIES = ['idb', 'rxjs', 'nanoid']
const KB = 1000

/** Minified, tree-shaken ESM bundle of the whole public API, and its gzip size (level 9). */
async function measure(entry: string, external: string[]): Promise<{ min: number; gzip: number }> {
  const out = await build({
    entryPoints: [entry], bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022',
    external, write: false, logLevel: 'silent',
  })
  const code = out.outputFiles[0]!.contents
  return { min: code.length, gzip: gzipSync(code, { level: 9 }).length }
}

/**
 * Bundle size of @colloquy/core as an app pays for it: its built `dist/index.js` bundled and
 * minified with esbuild, (a) with idb, rxjs and nanoid left external (Colloquy's own code) and
 * (b) with everything bundled, tree-shaken to the parts core actually uses.
 */
const bundle: Workload = {
  id: 'bundle',
  title: '@colloquy/core bundle size (esbuild, min+gzip)',
  env: 'node',
  async run() {
    const entry = fileURLToPath(import.meta.resolve('@colloquy/core'))
    const own = await measure(entry, DEPENDENCIES)
    const all = await measure(entry, [])
    const row = (metric: string, m: { min: number; gzip: number }, limit: number, note: string): BenchRow => ({
      id: 'bundle', subject: '@colloquy/core', metric, value: m.gzip / KB, unit: 'kB', better: 'lower',
      target: `<= ${limit} kB`, pass: m.gzip <= limit * KB, note: `${(m.min / KB).toFixed(1)} kB minified; ${note}`,
    })
    return [
      row('own code, min+gzip', own, 10, `${DEPENDENCIES.join(', ')} external`),
      row('with idb+rxjs+nanoid, min+gzip', all, 22, `dependencies add ${((all.gzip - own.gzip) / KB).toFixed(1)} kB gzip`),
    ]
  },
}

export default bundle
