import { playwright } from '@vitest/browser-playwright'
import { defineConfig } from 'vitest/config'
import { chromiumArgs } from '../../../vite.config.js'

// Only for measuring F1 by hand with exact heap numbers (Chromium rounds
// performance.memory unless told otherwise):
//   VITE_F1_MB=50 npx vitest run -c packages/formats/test/f1.vitest.config.ts
export default defineConfig({
  resolve: { conditions: ['source', 'module', 'browser', 'development|production'] },
  test: {
    include: ['packages/formats/test/f1.browser.test.ts'],
    testTimeout: 300_000,
    browser: {
      enabled: true,
      headless: true,
      screenshotFailures: false,
      provider: playwright({
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          args: [...chromiumArgs, '--enable-precise-memory-info', '--js-flags=--expose-gc'],
        },
      }),
      instances: [{ browser: 'chromium' }],
    },
  },
})
