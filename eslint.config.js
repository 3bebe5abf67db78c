// ESLint for the whole repository, one flat config. Layout is Prettier's job (`pnpm run format`),
// so nothing here checks spacing or line length.
import js from '@eslint/js'
import globals from 'globals'
import reactHooks from 'eslint-plugin-react-hooks'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.docs-test/**',
      'docs/api/**',
      'test/e2e/.tmp/**',
      '**/.data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,mts}'],
    rules: {
      // Imports that only name types are written `import type`, so a type never drags a module
      // (and its side effects) into a bundle; `verbatimModuleSyntax` keeps them as written.
      // `typeof import('./x.js')` stays allowed: it types a module loaded lazily without loading it.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  // Type-aware promise rules cost a full type-check (about a minute of CPU on two cores, four
  // times the rest of the lint), so they run on request: `pnpm run lint:promises`.
  ...(process.env.LINT_PROMISES
    ? [
        {
          // What tsconfig.json type-checks: the project service needs each file in its program.
          files: [
            'packages/*/src/**/*.{ts,tsx}',
            'packages/*/test/**/*.{ts,tsx}',
            'test/**/*.{ts,tsx}',
            'examples/*/src/**/*.{ts,tsx}',
          ],
          languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
          rules: {
            '@typescript-eslint/no-floating-promises': 'error',
            '@typescript-eslint/no-misused-promises': 'error',
          },
        },
      ]
    : []),
  {
    // The rules of hooks where React code lives, both as errors: a dependency left out of a list is
    // a stale value that no type check sees. (The plugin's React Compiler rules are not on: nothing
    // here is built with the compiler, and the latest-value ref they forbid is how the hooks hand
    // callbacks the current options without re-subscribing.) The Vue adapter's composables share
    // the `use` prefix and are not React hooks.
    files: [
      'packages/{react,assistant-ui,ai-sdk}/**/*.{ts,tsx}',
      'examples/{react-chat,assistant-ui-chat,ai-sdk-chat}/**/*.{ts,tsx}',
    ],
    ignores: ['**/vue.ts', '**/vue.*.ts'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // Tests read the server's JSON answers, whose shape their assertions check; typing each one
    // would restate the wire protocol, which gets one module of its own in core.
    files: ['test/**', 'packages/*/test/**', 'examples/*/test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain JavaScript: the CLIs, scripts and the service worker run in Node or a worker.
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
)
