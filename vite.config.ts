import { defineConfig } from 'vitest/config'
import { playwright } from '@vitest/browser-playwright'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { readmeBlocks } from './test/docs/readme-plugin.js'
import { engines } from './test/support/engine-provider.js'
import { CHROMIUM_ARGS } from './test/support/engines.js'
import { SupportReporter } from './test/engines/support-reporter.js'
import { RunSummaryReporter } from './test/support/run-summary.js'

// Tests import workspace packages from their sources (the `source` export condition), so no
// build is needed to run them; `pnpm build` produces the `dist/` that Node and users load.
const conditions = ['source', 'module', 'browser', 'development|production']

export const chromiumArgs = CHROMIUM_ARGS

// The suites that also run in WebKit and Gecko: the store over each engine's own IndexedDB
// (conformance, attachments, import, Web Locks, the commit paths, limits), and the format
// importers. The framework bindings' suites render the same store through React and Vue, whose
// engine differences are not ours; they run in Chromium only.
export const engineSuites = [
  'test/conformance/idb.browser.test.ts',
  'test/engines/*.browser.test.ts',
  'packages/core/test/*.browser.test.ts',
  'packages/formats/test/import.browser.test.ts',
]

/** A browser project for one engine driven by the machine's own packages (see test/support/engines.ts). */
const engineProject = (engine: 'webkit' | 'firefox') => ({
  extends: true as const,
  optimizeDeps: { include: ['rxjs', 'idb', 'nanoid', 'fflate', 'sql.js', 'fast-check'] },
  test: {
    name: engine,
    include: engineSuites,
    testTimeout: 60_000,
    browser: {
      enabled: true,
      headless: true,
      screenshotFailures: false,
      fileParallelism: false,
      provider: engines(),
      instances: [{ browser: engine }],
    },
  },
})

export default defineConfig({
  resolve: { conditions },
  test: {
    // After a run of every feature in every engine, the README's support table is written from it;
    // with RUN_SUMMARY set, the run's outcome is written for `.ci/run` to judge (test/support/run-summary.ts).
    reporters: ['default', new SupportReporter(), new RunSummaryReporter()],
    // Node test files at least two at a time, even on two cores: most of a demo or server suite's
    // time is spent waiting on the browser, server or PostgreSQL it starts, so one file at a time
    // (Vitest's default there) left a core idle a third of the run. The browser suites keep one
    // file at a time (`fileParallelism: false`): files in one page share an origin's IndexedDB,
    // Web Locks and channels. All projects get the same value, which Vitest requires of projects
    // that run side by side.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Property runs end inside their test's time, a failure's input reported (see the file).
    setupFiles: ['test/support/property-budget.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: [
            'packages/*/test/**/*.test.ts',
            'packages/*/test/**/*.test.tsx',
            'test/**/*.test.ts',
            'test/**/*.test.tsx',
            'examples/*/test/**/*.test.ts',
          ],
          exclude: ['**/*.browser.test.ts', '**/*.browser.test.tsx', '**/node_modules/**'],
          testTimeout: 60_000,
          // End-to-end suites build an app or start a server once per file.
          hookTimeout: 180_000,
        },
        ssr: { resolve: { conditions, externalConditions: ['source'] } },
      },
      {
        extends: true,
        // README examples that need a page are served as modules (test/docs/readme-examples.browser.test.tsx).
        plugins: [readmeBlocks(fileURLToPath(new URL('.', import.meta.url)))],
        // Every dependency the browser suites load, optimized up front: a dependency found
        // mid-run makes Vite re-optimize and reload, and two copies of React or Vue in one page
        // break hooks and scopes on a fresh machine.
        optimizeDeps: {
          include: [
            'react',
            'react/jsx-runtime',
            'react/jsx-dev-runtime',
            'react-dom',
            'react-dom/client',
            'react-dom/server',
            'react-dom/profiling',
            '@testing-library/react',
            'vue',
            '@vue/test-utils',
            'rxjs',
            'idb',
            'nanoid',
            'immer',
            'fflate',
            'sql.js',
            'fast-check',
            '@assistant-ui/react',
            'ai',
            '@ai-sdk/react',
          ],
        },
        test: {
          name: 'browser',
          include: [
            'packages/*/test/**/*.browser.test.ts',
            'test/**/*.browser.test.ts',
            'packages/*/test/**/*.browser.test.tsx',
            'test/**/*.browser.test.tsx',
          ],
          testTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            fileParallelism: false,
            provider: playwright({
              launchOptions: { executablePath: '/usr/bin/chromium', args: chromiumArgs },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
      engineProject('webkit'),
      engineProject('firefox'),
    ],
  },
})
