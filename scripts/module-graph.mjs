#!/usr/bin/env node
// The module graph of a source folder, from its import statements (static `import`/`export …
// from` and `import()`): files per folder, import arrows, arrows running back up, circles, and
// the same between folders. `node scripts/module-graph.mjs [dir] [--json]`, default
// packages/core/src. Only relative imports of .ts files count (packages are outside the graph).
//
// Arrows running back up: the arrows a depth-first walk (files in name order) finds pointing at a
// file still on its path, i.e. the arrows that close a circle; removing them leaves no circle.
// Circles: strongly connected groups of more than one file. Type-only imports (`import type`,
// `export type`) are counted apart: the bundler erases them, the reader does not.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The core's folders, lowest layer first: each may import only those before it. */
export const CORE_LAYERS = [
  'model',
  'util',
  'validation',
  'protocol',
  'storage',
  'storage/memory',
  'storage/idb',
  'engine',
  'ops',
  'attachments',
  'replica',
  'import',
  'live',
  'relay',
  'crypto',
  // The sealing storage wrapper and an encrypted store's keys: a storage built on crypto.
  'storage/sealed',
  '.',
  // Entry points of their own above the store (they take a store and read it through its API).
  'search',
]

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return walk(p)
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [p] : []
  })
}

/** The graph of the sources under `root`; `layers` (folders, lowest first) finds arrows pointing up. */
export function moduleGraph(root, layers) {
  const files = walk(root)
    .map((f) => relative(root, f))
    .sort()
  const known = new Set(files)
  // `import … from '…'`, `export … from '…'` (over several lines), `import '…'`, `import('…')`.
  const STATIC = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g
  const BARE = /(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g
  const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

  function target(from, spec) {
    if (!spec.startsWith('.')) return undefined
    const base = join(dirname(from), spec).replace(/\\/g, '/')
    for (const c of [
      base.replace(/\.js$/, '.ts'),
      base.replace(/\.js$/, '.tsx'),
      `${base}.ts`,
      `${base}/index.ts`,
    ])
      if (known.has(c)) return c
    return undefined
  }

  /** from -> to -> { type: only type-only imports, dynamic: some import() } */
  const edges = new Map(files.map((f) => [f, new Map()]))
  for (const f of files) {
    const text = readFileSync(join(root, f), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '')
    const add = (spec, kind) => {
      const t = target(f, spec)
      if (!t || t === f) return
      const e = edges.get(f).get(t) ?? { type: true, dynamic: false }
      if (kind === 'dynamic') {
        e.dynamic = true
        e.type = false
      }
      if (kind === 'value') e.type = false
      edges.get(f).set(t, e)
    }
    for (const m of text.matchAll(STATIC)) {
      // `import { type A, type B }` is type-only too.
      const names = m[3]
      const typeOnly =
        Boolean(m[2]) ||
        (/^\{[^}]*\}$/.test(names.trim()) &&
          names
            .replace(/[{}\s]/g, '')
            .split(',')
            .filter(Boolean)
            .every((n) => n.startsWith('type')))
      add(m[4], typeOnly ? 'type' : 'value')
    }
    for (const m of text.matchAll(BARE)) add(m[1], 'value')
    for (const m of text.matchAll(DYNAMIC)) add(m[1], 'dynamic')
  }

  const folderOf = (f) => (dirname(f) === '.' ? '.' : dirname(f))

  function analyse(nodes, next) {
    // Arrows running back up: depth-first, in name order.
    const back = []
    const state = new Map()
    const visit = (n) => {
      state.set(n, 1)
      for (const m of [...next(n)].sort()) {
        if (state.get(m) === 1) back.push([n, m])
        else if (!state.has(m)) visit(m)
      }
      state.set(n, 2)
    }
    for (const n of nodes) if (!state.has(n)) visit(n)
    // Circles: Tarjan's strongly connected components.
    let index = 0
    const idx = new Map(),
      low = new Map(),
      stack = [],
      on = new Set(),
      sccs = []
    const strong = (v) => {
      idx.set(v, index)
      low.set(v, index++)
      stack.push(v)
      on.add(v)
      for (const w of next(v)) {
        if (!idx.has(w)) {
          strong(w)
          low.set(v, Math.min(low.get(v), low.get(w)))
        } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
      }
      if (low.get(v) === idx.get(v)) {
        const c = []
        let w
        do {
          w = stack.pop()
          on.delete(w)
          c.push(w)
        } while (w !== v)
        if (c.length > 1) sccs.push(c.sort())
      }
    }
    for (const n of nodes) if (!idx.has(n)) strong(n)
    return { back, circles: sccs.sort((a, b) => b.length - a.length) }
  }

  function report(runtimeOnly) {
    const keep = (e) => !runtimeOnly || !e.type
    const next = (f) => [...edges.get(f)].filter(([, e]) => keep(e)).map(([t]) => t)
    const arrows = files.reduce((n, f) => n + next(f).length, 0)
    const fileGraph = analyse(files, next)
    // Folders: an arrow between two folders when some file of one imports some file of the other.
    const folders = [...new Set(files.map(folderOf))].sort()
    const fNext = new Map(folders.map((d) => [d, new Set()]))
    for (const f of files)
      for (const t of next(f)) if (folderOf(f) !== folderOf(t)) fNext.get(folderOf(f)).add(folderOf(t))
    const folderGraph = analyse(folders, (d) => fNext.get(d))
    // With `--layers a,b,c` (lowest first): the folder arrows that point up the declared order.
    const rank = (d) => layers.indexOf(d)
    const upward = layers
      ? [...fNext].flatMap(([d, to]) =>
          [...to].filter((t) => rank(t) < 0 || rank(d) < 0 || rank(t) > rank(d)).map((t) => `${d} -> ${t}`),
        )
      : []
    return {
      upward,
      folderEdges: [...fNext].flatMap(([d, to]) => [...to].map((t) => `${d} -> ${t}`)),
      arrows,
      back: fileGraph.back.length,
      backArrows: fileGraph.back.map(([a, b]) => `${a} -> ${b}`),
      circles: fileGraph.circles.map((c) => c.length),
      circleFiles: fileGraph.circles,
      folderArrows: [...fNext.values()].reduce((n, s) => n + s.size, 0),
      folderBack: folderGraph.back.map(([a, b]) => `${a} -> ${b}`),
      folderCircles: folderGraph.circles,
    }
  }

  const perFolder = {}
  for (const f of files) perFolder[folderOf(f)] = (perFolder[folderOf(f)] ?? 0) + 1
  return {
    root: relative(process.cwd(), root) || '.',
    files: files.length,
    perFolder,
    all: report(false),
    runtime: report(true),
  }
}

const args = process.argv.slice(2)
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const json = args.includes('--json')
  const root = resolve(args.find((a) => !a.startsWith('--')) ?? 'packages/core/src')
  const layerArg = args.find((a) => a.startsWith('--layers='))?.slice(9)
  const out = moduleGraph(root, layerArg === 'core' ? CORE_LAYERS : layerArg?.split(','))
  const perFolder = out.perFolder
  if (json) console.log(JSON.stringify(out, null, 2))
  else {
    console.log(`${out.root}: ${out.files} files in ${Object.keys(perFolder).length} folders`)
    for (const [d, n] of Object.entries(perFolder)) console.log(`  ${d.padEnd(20)} ${n}`)
    for (const [label, r] of [
      ['all imports', out.all],
      ['runtime imports (type-only left out)', out.runtime],
    ]) {
      console.log(
        `${label}: ${r.arrows} arrows, ${r.back} running back up, ${r.circles.length} circles (sizes ${r.circles.join(', ') || '-'})`,
      )
      console.log(
        `  between folders: ${r.folderArrows} arrows, ${r.folderBack.length} running back up, ${r.folderCircles.length} circles`,
      )
      for (const c of r.folderCircles) console.log(`    folder circle: ${c.join(' ')}`)
      if (layerArg)
        console.log(
          `  against the declared layers: ${r.upward.length} arrows pointing up${r.upward.map((a) => `\n    up: ${a}`).join('')}`,
        )
    }
    if (args.includes('--verbose')) {
      for (const a of out.all.backArrows) console.log(`  back: ${a}`)
      for (const c of out.all.circleFiles) console.log(`  circle: ${c.join(' ')}`)
      for (const a of out.all.folderBack) console.log(`  folder back: ${a}`)
      for (const a of out.all.folderEdges) console.log(`  folder arrow: ${a}`)
    }
  }
}
