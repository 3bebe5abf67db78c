import vue from '@vitejs/plugin-vue'
import { defaultClientConditions, defineConfig } from 'vite'

export default defineConfig({
  root: import.meta.dirname,
  // Workspace packages are read from their TypeScript sources: no package build needed first.
  resolve: { conditions: ['source', ...defaultClientConditions] },
  plugins: [vue()],
  build: { target: 'es2022' },
})
