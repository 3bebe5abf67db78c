import { readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'
import type { EngineName } from '../support/engines.js'
import { ENGINE_ORDER, renderTable, supportOf, withTable, type Outcome } from './support.js'

// After a run that covered every feature in every engine (`npm test`), writes what it showed:
// `test/engines/support.json` and the support table in the root README. A partial run (one file,
// one project) leaves both alone.

const root = new URL('../..', import.meta.url).pathname

/** The engine a test ran in: its browser project's, or a multi-engine suite's top-level describe. */
function engineOf(project: string, path: readonly string[]): EngineName | undefined {
  // A browser project's instance is named "<project> (<browser>)".
  const browser = /\((\w+)\)$/.exec(project)?.[1]
  return ENGINE_ORDER.find((e) => e === browser) ?? ENGINE_ORDER.find((e) => e === path[0])
}

export class SupportReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const outcomes: Outcome[] = []
    for (const m of modules) {
      const suite = relative(root, m.moduleId)
      for (const t of m.children.allTests()) {
        const path: string[] = []
        for (let p = t.parent; p.type === 'suite'; p = p.parent) path.unshift(p.name)
        const engine = engineOf(m.project.name, path)
        const state = t.result().state
        if (!engine || state === 'pending') continue
        const meta = t.meta()
        outcomes.push({ suite, engine, name: t.name, state, limit: meta.limit, version: meta.version })
      }
    }
    const support = supportOf(outcomes)
    if (!support) return
    writeFileSync(join(root, 'test/engines/support.json'), `${JSON.stringify(support, null, 2)}\n`)
    const readme = join(root, 'README.md')
    writeFileSync(readme, withTable(readFileSync(readme, 'utf8'), renderTable(support)))
  }
}
