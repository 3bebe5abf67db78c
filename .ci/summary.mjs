// The closing line of a CI run and its verdict, from the summary test/support/run-summary.ts wrote:
//   tests: N passed, N failed, N skipped (N intended), N errors
// Exits 1 when a test failed, a test was skipped that .ci/intended-skips does not name, an
// entry there is stale or malformed, or an error happened outside a test.
// Usage: node .ci/summary.mjs <summary.json> [<intended-skips>]
import { existsSync, readFileSync } from 'node:fs'

const [file, listFile = new URL('./intended-skips', import.meta.url).pathname] = process.argv.slice(2)
const problems = []
const summary =
  file && existsSync(file)
    ? JSON.parse(readFileSync(file, 'utf8'))
    : (problems.push('no run summary: the run did not finish'),
      { passed: 0, failed: 0, skipped: [], errors: [], files: [] })

const glob = (text) =>
  new RegExp(
    `^${text
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )
const entries = []
for (const [n, raw] of readFileSync(listFile, 'utf8').split('\n').entries()) {
  const text = raw.trim()
  if (!text || text.startsWith('#')) continue
  const parts = text.split(' | ').map((p) => p.trim())
  if (parts.length !== 4 || parts.some((p) => !p)) {
    problems.push(`${listFile}:${n + 1}: want "project | file | test | reason", got: ${text}`)
    continue
  }
  const [project, path, name, reason] = parts
  entries.push({
    at: `${listFile}:${n + 1}`,
    project: glob(project),
    path,
    name: glob(name),
    reason,
    used: false,
  })
}

let intended = 0
for (const skip of summary.skipped) {
  const [project, path, ...rest] = skip.split(' | ')
  const name = rest.join(' | ')
  const entry = entries.find((e) => e.project.test(project) && e.path === path && e.name.test(name))
  if (entry) {
    entry.used = true
    intended++
  } else problems.push(`skipped, not declared in .ci/intended-skips: ${skip}`)
}
for (const e of entries) {
  const ran = summary.files.some((f) => {
    const [project, path] = f.split(' | ')
    return e.project.test(project) && e.path === path
  })
  if (ran && !e.used) problems.push(`${e.at}: its file ran and skipped no test it names (stale entry?)`)
}
for (const e of summary.errors) problems.push(`error outside a test: ${e}`)

for (const p of problems) console.log(p)
console.log(
  `tests: ${summary.passed} passed, ${summary.failed} failed, ${summary.skipped.length} skipped (${intended} intended), ${summary.errors.length} errors`,
)
process.exit(summary.failed > 0 || problems.length > 0 ? 1 : 0)
