import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { END, FEATURES, START, renderTable, withTable, type Support } from './support.js'

// The README's browser support table is what the last full run wrote (support.json), not text
// edited by hand; and that run covered every feature.

const root = new URL('../..', import.meta.url).pathname
const readme = readFileSync(`${root}README.md`, 'utf8')
const support = JSON.parse(readFileSync(`${root}test/engines/support.json`, 'utf8')) as Support

describe('the browser support table', () => {
  it('in the README is exactly the one made from the last full run', () => {
    expect(readme).toContain(START)
    expect(readme).toContain(END)
    expect(readme).toBe(withTable(readme, renderTable(support)))
  })

  it('covers every feature, in every engine, with a version for each', () => {
    expect(support.features.map((f) => f.feature)).toStrictEqual(FEATURES.map((f) => f.feature))
    for (const f of support.features)
      for (const e of ['chromium', 'webkit', 'firefox'] as const)
        expect(f.engines[e], `${f.feature} in ${e}`).toBeDefined()
    expect(Object.keys(support.versions).sort()).toStrictEqual(['chromium', 'firefox', 'webkit'])
  })
})
