import { defineConfig } from 'vitest/config'

// Runs the demo apps' tests on their own (`npx vitest run --config test/e2e/vitest.config.ts`):
// the end-to-end suites here and the examples' unit tests, with packages read from source.
const conditions = ['source', 'module', 'browser', 'development|production']

export default defineConfig({
  root: new URL('../..', import.meta.url).pathname,
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['source'] } },
  test: {
    environment: 'node',
    include: ['test/e2e/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
})
