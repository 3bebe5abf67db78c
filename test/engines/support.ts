import type { EngineName } from '../support/engines.js'

// The browser support table in the root README, made from a test run: which features' suites
// passed in which engine, the version each ran in, and the limits the tests observed. The
// reporter (`support-reporter.ts`) writes `support.json` and the table after a run that covered
// every feature in every engine; `support-table.test.ts` fails when the README differs from it.

export const ENGINE_ORDER: readonly EngineName[] = ['chromium', 'webkit', 'firefox']
const ENGINE_TITLE: Record<EngineName, string> = {
  chromium: 'Chromium',
  webkit: 'WebKit (Safari)',
  firefox: 'Gecko (Firefox)',
}

/** Features and the suites (paths from the repository root) that prove them. */
export const FEATURES: ReadonlyArray<{ readonly feature: string; readonly suites: readonly string[] }> = [
  { feature: 'Store over IndexedDB (conformance suite)', suites: ['test/conformance/idb.browser.test.ts'] },
  {
    feature: 'Commit paths, limits, schema upgrades, large reads',
    suites: [
      'commit-path',
      'early-commit',
      'append-layout',
      'streamed-batch',
      'split-read',
      'limits',
      'idb-upgrade',
      'store',
      'recipe',
    ].map((n) => `packages/core/test/${n}.browser.test.ts`),
  },
  { feature: 'Attachments', suites: ['packages/core/test/attachments.browser.test.ts'] },
  { feature: 'Writer lock (Web Locks)', suites: ['packages/core/test/writer-lock.browser.test.ts'] },
  {
    feature: 'Imports (core, transcript formats)',
    suites: ['packages/core/test/import.browser.test.ts', 'packages/formats/test/import.browser.test.ts'],
  },
  { feature: 'Two tabs (relay, lock handover)', suites: ['test/tabs/two-tabs.test.ts'] },
  { feature: 'Sync with a server (offline, eviction)', suites: ['test/sync/two-devices.test.ts'] },
  {
    feature: 'Storage API (persistence, usage, quota)',
    suites: ['packages/core/test/device-storage.browser.test.ts'],
  },
  {
    feature: 'Demo app end to end (send, stream, edit, branch, reload, offline)',
    suites: ['test/e2e/react-chat-engines.test.ts'],
  },
]
/** The suite whose tests record each engine's version. */
export const VERSION_SUITE = 'test/engines/driver.test.ts'

export interface Tally {
  passed: number
  failed: number
  skipped: number
  /** Limits the tests observed (`noteLimit`), once each. */
  limits: string[]
  /** Tests not run in this engine (skipped for it). */
  notRun: string[]
}
export interface Support {
  versions: Partial<Record<EngineName, string>>
  /** Limits of the engine itself that the driver's tests observed (not of one feature). */
  browser: Partial<Record<EngineName, string[]>>
  features: Array<{ feature: string; engines: Partial<Record<EngineName, Tally>> }>
}

/** One test's outcome, as the reporter hands it over. */
export interface Outcome {
  suite: string
  engine: EngineName
  name: string
  state: 'passed' | 'failed' | 'skipped'
  limit?: string
  version?: string
}

/** The support data of a run's outcomes; undefined unless every feature ran in every engine. */
export function supportOf(outcomes: readonly Outcome[]): Support | undefined {
  const versions: Support['versions'] = {}
  const browser: Support['browser'] = {}
  for (const o of outcomes) {
    if (o.suite !== VERSION_SUITE) continue
    if (o.version) versions[o.engine] = o.version
    if (o.limit) (browser[o.engine] ??= []).push(o.limit)
  }
  const features: Support['features'] = []
  for (const { feature, suites } of FEATURES) {
    const engines: Partial<Record<EngineName, Tally>> = {}
    for (const o of outcomes) {
      if (!suites.includes(o.suite)) continue
      const t = (engines[o.engine] ??= { passed: 0, failed: 0, skipped: 0, limits: [], notRun: [] })
      t[o.state]++
      if (o.state === 'skipped') t.notRun.push(o.name)
      if (o.limit && !t.limits.includes(o.limit)) t.limits.push(o.limit)
    }
    if (ENGINE_ORDER.some((e) => !engines[e] || engines[e].passed + engines[e].failed === 0)) return undefined
    for (const t of Object.values(engines)) t.notRun.sort()
    features.push({ feature, engines })
  }
  if (ENGINE_ORDER.some((e) => !versions[e])) return undefined
  return { versions, browser, features }
}

const cell = (t: Tally): string =>
  t.failed
    ? `✗ ${t.failed} of ${t.passed + t.failed} fail`
    : `✓ ${t.passed}${t.skipped ? ` (${t.skipped} not run)` : ''}`
const esc = (s: string): string => s.replace(/\|/g, '\\|')

/** The README's table (Markdown), and the limits under it, from `support`. */
export function renderTable(support: Support): string {
  const lines = [
    `| Feature | ${ENGINE_ORDER.map((e) => `${ENGINE_TITLE[e]}<br>${esc(support.versions[e]!)}`).join(' | ')} |`,
    `| --- | ${ENGINE_ORDER.map(() => '---').join(' | ')} |`,
    ...support.features.map(
      (f) => `| ${f.feature} | ${ENGINE_ORDER.map((e) => cell(f.engines[e]!)).join(' | ')} |`,
    ),
    '',
    'Cells count the tests that passed. Known limits, as the tests observed them:',
    '',
  ]
  for (const e of ENGINE_ORDER) {
    const limits = [...(support.browser[e] ?? []), ...support.features.flatMap((f) => f.engines[e]!.limits)]
    const notRun = support.features.flatMap((f) => f.engines[e]!.notRun.map((n) => `${f.feature}: ${n}`))
    if (!limits.length && !notRun.length) continue
    lines.push(
      `- **${ENGINE_TITLE[e]}**: ${[...new Set(limits)].map(esc).join('; ')}${limits.length && notRun.length ? '; ' : ''}${notRun.length ? `not tested here: ${notRun.map(esc).join('; ')}` : ''}.`,
    )
  }
  return lines.join('\n')
}

export const START = '<!-- support-table:start (written by the test run: test/engines/support.ts) -->'
export const END = '<!-- support-table:end -->'

/** `readme` with the text between the markers replaced by `table`; throws without the markers. */
export function withTable(readme: string, table: string): string {
  const a = readme.indexOf(START)
  const b = readme.indexOf(END)
  if (a < 0 || b < a) throw new Error(`README: the support table's markers are missing (${START} … ${END})`)
  return `${readme.slice(0, a + START.length)}\n${table}\n${readme.slice(b)}`
}
