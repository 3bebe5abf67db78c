import { writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'
import type { SerializedError } from 'vitest'

// What a run showed, for `.ci/run` to judge: every test's outcome (a skipped test by name, so an
// intended skip can be told from one caused by a failing hook) and every error that belongs to no
// test (a failing `beforeAll`, a file that does not load, an error thrown after a test returned).
// Written only when RUN_SUMMARY names a file; the closing line and the verdict are `.ci/summary.mjs`'s.

const root = new URL('../..', import.meta.url).pathname

export interface RunSummary {
  passed: number
  failed: number
  /** Skipped or todo tests, each as `project | file | full name`. */
  skipped: string[]
  /** Errors outside any test's own result, one line each. */
  errors: string[]
  /** `project | file` of every file that ran: an allow-list entry for one of them must match a skip. */
  files: string[]
}

const line = (e: SerializedError): string => `${e.name ?? 'Error'}: ${String(e.message).split('\n')[0]}`

export class RunSummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>): void {
    const out = process.env.RUN_SUMMARY
    if (!out) return
    const summary: RunSummary = { passed: 0, failed: 0, skipped: [], errors: [], files: [] }
    for (const m of modules) {
      const where = `${m.project.name} | ${relative(root, m.moduleId)}`
      summary.files.push(where)
      for (const e of m.errors()) summary.errors.push(`${where}: ${line(e)}`)
      for (const s of m.children.allSuites())
        for (const e of s.errors()) summary.errors.push(`${where} > ${s.fullName}: ${line(e)}`)
      for (const t of m.children.allTests()) {
        const state = t.result().state
        if (state === 'passed') summary.passed++
        else if (state === 'failed') summary.failed++
        // A test that never finished (the run was cut short) did not pass either.
        else summary.skipped.push(`${where} | ${t.fullName}`)
      }
    }
    for (const e of unhandled) summary.errors.push(`unhandled: ${line(e)}`)
    writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`)
  }
}
