// The real transcripts' texts, for the search corpus (Node only: it reads files). Used by the
// Node SEARCH workload and, through the runner's `virtual:bench-search-samples` module, by the
// Chromium SEARCH_IDB workload: one corpus for both.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** `shared/samples` beside the checkout (`../shared` of the main one, `../../shared` of a worktree). */
export function samplesDir(from = process.cwd()) {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    const p = join(dir, 'shared', 'samples')
    if (existsSync(p)) return p
  }
  throw new Error('no shared/samples above the working directory')
}

/** Every string of 20+ characters with a space in the sample transcripts: what people and models wrote. */
export function sampleTexts(dir = samplesDir()) {
  const out = new Set()
  const strings = (v) => {
    if (typeof v === 'string') {
      if (v.length >= 20 && v.length < 20_000 && v.includes(' ')) out.add(v)
    } else if (Array.isArray(v)) v.forEach(strings)
    else if (v && typeof v === 'object') Object.values(v).forEach(strings)
  }
  const walk = (d) => {
    for (const f of readdirSync(d).sort()) {
      const p = join(d, f)
      if (statSync(p).isDirectory()) walk(p)
      else if (f.endsWith('.jsonl'))
        for (const line of readFileSync(p, 'utf8').split('\n')) {
          try {
            if (line.trim()) strings(JSON.parse(line))
          } catch {
            // a truncated sample line
          }
        }
      else if (f.endsWith('.json')) strings(JSON.parse(readFileSync(p, 'utf8')))
    }
  }
  walk(dir)
  return [...out]
}
