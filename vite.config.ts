import { defineConfig } from 'vitest/config'
import { playwright } from '@vitest/browser-playwright'
import { fileURLToPath } from 'node:url'
import { readmeBlocks } from './test/docs/readme-plugin.js'

// Tests import workspace packages from their sources (the `source` export condition), so no
// build is needed to run them; `pnpm build` produces the `dist/` that Node and users load.
const conditions = ['source', 'module', 'browser', 'development|production']

export const chromiumArgs = [
  '--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
]

export default defineConfig({
  resolve: { conditions },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['packages/*/test/**/*.test.ts', 'packages/*/test/**/*.test.tsx', 'test/**/*.test.ts', 'test/**/*.test.tsx', 'examples/*/test/**/*.test.ts'],
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
            'react', 'react/jsx-runtime', 'react/jsx-dev-runtime', 'react-dom', 'react-dom/client', 'react-dom/server',
            'react-dom/profiling', '@testing-library/react', 'vue', '@vue/test-utils', 'rxjs', 'idb', 'nanoid', 'immer', 'fflate', 'sql.js',
            '@assistant-ui/react', 'ai', '@ai-sdk/react',
          ],
        },
        test: {
          name: 'browser',
          include: ['packages/*/test/**/*.browser.test.ts', 'test/**/*.browser.test.ts', 'packages/*/test/**/*.browser.test.tsx', 'test/**/*.browser.test.tsx'],
          testTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({ launchOptions: { executablePath: '/usr/bin/chromium', args: chromiumArgs } }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
})
