// Compares FlexSearch 0.8, MiniSearch, Orama and Colloquy's own index on one corpus from the samples.
// Compares full-text libraries against the own index on one corpus. The libraries are not
// dependencies of the repository: install them apart and point LIBS at that directory:
//   mkdir /tmp/search-libs && cd /tmp/search-libs && npm i flexsearch@0.8.212 minisearch@7.2.0 @orama/orama@3.1.18
//   pnpm --filter @colloquy/core build
//   for l in Flex Mini Orama own bundle; do LIBS=/tmp/search-libs node --expose-gc test/bench/search-libraries.mjs 20000 $l; done
// (one library per process, so each heap figure is its own). Runs in Node: IndexedDB is
// fake-indexeddb there, so the persist column compares the libraries' writes, not a browser's disk.
import 'fake-indexeddb/auto'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
globalThis.window = globalThis
globalThis.navigator ??= {}
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const LIBS = process.env.LIBS ?? '/tmp/search-libs'
const req = createRequire(join(LIBS, 'package.json'))
// FlexSearch's CommonJS build of the IndexedDB adapter does not load (SUPPORT_TAGS undefined): its ES modules.
const esm = (path) => import(pathToFileURL(join(LIBS, 'node_modules', path)).href)
const { Index } = await esm('flexsearch/dist/flexsearch.bundle.module.min.mjs')
const { default: IndexedDB } = await esm('flexsearch/dist/module/db/indexeddb/index.js')
const MiniSearch = req('minisearch')
const { create, insertMultiple, insert, search: oramaSearch } = req('@orama/orama')

const CORE = new URL('../../packages/core/dist/search', import.meta.url).pathname
const { InvertedIndex, docOf } = await import(`${CORE}/inverted-index.js`)
const { tokenize } = await import(`${CORE}/tokenize.js`)
const { runQuery } = await import(`${CORE}/run-query.js`)
const { parseQuery } = await import(`${CORE}/parse-query.js`)
const { openIndexStore } = await import(`${CORE}/index-store.js`)

const N = Number(process.argv[2] ?? 20000)
// Corpus: every string of 20+ characters with a space in the sample transcripts, cycled to N.
const texts = []
const walk = (d) => {
  for (const f of readdirSync(d)) {
    const p = join(d, f)
    if (statSync(p).isDirectory()) walk(p)
    else if (/\.jsonl?$/.test(f)) collect(readFileSync(p, 'utf8'), f.endsWith('l'))
  }
}
const strings = (v) => {
  if (typeof v === 'string') {
    if (v.length >= 20 && v.includes(' ') && v.length < 20000) texts.push(v)
  } else if (Array.isArray(v)) v.forEach(strings)
  else if (v && typeof v === 'object') Object.values(v).forEach(strings)
}
function collect(s, lines) {
  try {
    if (lines)
      for (const l of s.split('\n')) {
        if (l.trim()) strings(JSON.parse(l))
      }
    else strings(JSON.parse(s))
  } catch {
    // a truncated sample
  }
}
const samples = (() => {
  for (let d = process.cwd(); d !== dirname(d); d = dirname(d))
    if (existsSync(join(d, 'shared', 'samples'))) return join(d, 'shared', 'samples')
  throw new Error('no shared/samples above the working directory')
})()
walk(samples)
const uniq = [...new Set(texts)]
const docs = Array.from({ length: N }, (_, i) => ({ id: i, text: uniq[i % uniq.length] }))
const chars = docs.reduce((n, d) => n + d.text.length, 0)
// Queries: 1-3 words of 4+ letters from random documents, and prefixes (first 3 letters).
let seed = 7
const rnd = (n) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n
const queries = []
while (queries.length < 300) {
  const words = docs[rnd(N)].text.toLowerCase().match(/[a-z]{4,}/g)
  if (!words || words.length < 3) continue
  const k = queries.length % 4
  const at = rnd(words.length - 2)
  queries.push(
    k === 3
      ? { q: words[at].slice(0, 3), prefix: true }
      : { q: words.slice(at, at + k + 1).join(' '), prefix: false },
  )
}
const gc = () => {
  global.gc()
  global.gc()
}
const heap = () => (gc(), process.memoryUsage().heapUsed)
const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]
const ms = (x) => x.toFixed(3)

const only = process.argv[3]
async function measure(name, make) {
  if (only && !name.startsWith(only)) return
  const h0 = heap()
  const t0 = performance.now()
  const s = await make.build(docs.slice(0, N - 1000))
  const tBuild = performance.now() - t0
  const t1 = performance.now()
  for (const d of docs.slice(N - 1000)) await s.add(d)
  const tAdd = (performance.now() - t1) / 1000
  const h1 = heap()
  const times = []
  let hits = 0
  for (const r of [...queries, ...queries]) {
    const t = performance.now()
    hits += await s.search(r)
    times.push(performance.now() - t)
  }
  const q = times.slice(queries.length)
  let persist = ''
  if (s.persist) {
    const t = performance.now()
    await s.persist()
    persist = ms(performance.now() - t)
  }
  console.log(
    `| ${name} | ${Math.round((N - 1000) / (tBuild / 1000))} | ${ms(tAdd)} | ${ms(pct(q, 0.5))} | ${ms(pct(q, 0.95))} | ${((h1 - h0) / 1e6).toFixed(1)} | ${persist} | ${hits / 2} |`,
  )
  return s
}

async function bundle(src) {
  const out = await build({
    stdin: { contents: src, resolveDir: LIBS, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    external: ['rxjs', 'idb', 'nanoid'],
  })
  const code = out.outputFiles[0].contents
  return `${(code.length / 1000).toFixed(1)} kB min, ${(gzipSync(code, { level: 9 }).length / 1000).toFixed(1)} kB gzip`
}

if (!only)
  console.log(
    `corpus: ${N} messages, ${(chars / 1e6).toFixed(1)} M chars, ${uniq.length} distinct texts from /work/shared/samples; ${queries.length} queries (1-3 words, prefixes), 20 hits each`,
  )
if (!only)
  console.log(
    '| library | build (docs/s) | add one (ms) | query p50 (ms) | query p95 (ms) | heap (MB) | persist all to fake-indexeddb (ms) | hits |',
  )
if (!only) console.log('|---|---|---|---|---|---|---|---|')

await measure('FlexSearch 0.8 Index (forward)', {
  build(ds) {
    const ix = new Index({ tokenize: 'forward' })
    for (const d of ds) ix.add(d.id, d.text)
    return {
      add: (d) => ix.add(d.id, d.text),
      search: (r) => ix.search(r.q, { limit: 20 }).length,
      async persist() {
        const db = new IndexedDB('flex-cmp')
        await ix.mount(db)
        await ix.commit()
      },
    }
  },
})
await measure('MiniSearch 7.2', {
  build(ds) {
    const ms = new MiniSearch({ fields: ['text'] })
    ms.addAll(ds)
    return {
      add: (d) => ms.add(d),
      search: (r) => ms.search(r.q, { prefix: r.prefix, combineWith: 'AND' }).slice(0, 20).length,
      persist: async () => JSON.stringify(ms).length,
    }
  },
})
await measure('Orama 3.1', {
  async build(ds) {
    const db = create({ schema: { text: 'string' } })
    await insertMultiple(
      db,
      ds.map((d) => ({ id: String(d.id), text: d.text })),
    )
    return {
      add: (d) => insert(db, { id: String(d.id), text: d.text }),
      search: async (r) => (await oramaSearch(db, { term: r.q, limit: 20, threshold: 0 })).hits.length,
    }
  },
})
await measure('own (InvertedIndex + BM25 + snippets)', {
  build(ds) {
    const ix = new InvertedIndex()
    const all = []
    const add = (d) => {
      const doc = docOf(
        { sid: 's' + (d.id % 1000), eid: String(d.id), role: 'user', ts: d.id, parent: null, rev: 0 },
        tokenize(d.text),
      )
      ix.add(doc)
      all.push(doc)
    }
    for (const d of ds) add(d)
    const source = { text: async (sid, eid) => docs[Number(eid)].text, leaf: () => null }
    return {
      add,
      search: async (r) =>
        (
          await runQuery(
            ix,
            { query: r.q, limit: 20, active_path_only: false, prefix: r.prefix },
            parseQuery(r.q, r.prefix),
            source,
          )
        ).hits.length,
      async persist() {
        const st = await openIndexStore('own-cmp')
        await st.write({ deleted: [], sessions: [], docs: all, removed: [] })
      },
    }
  },
})
if (only === 'bundle') {
  console.log('\nbundle (esbuild, minified; rxjs/idb external):')
  console.log(
    'FlexSearch Index + IndexedDB adapter:',
    await bundle(
      `export { Index } from 'flexsearch'; export { default as DB } from 'flexsearch/db/indexeddb'`,
    ),
  )
  console.log('MiniSearch:', await bundle(`export { default } from 'minisearch'`))
  console.log(
    'Orama create/insert/search/remove:',
    await bundle(`export { create, insert, search, remove } from '@orama/orama'`),
  )
  console.log(
    'own @colloquy/core/search (enableSearch, everything):',
    await bundle(`export * from '${CORE}/index.js'`),
  )
}
