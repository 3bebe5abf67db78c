import react from '@vitejs/plugin-react'
import { defaultClientConditions, defineConfig } from 'vite'

export default defineConfig({
  root: import.meta.dirname,
  // Workspace packages are read from their TypeScript sources, so the example builds without
  // building the packages first.
  resolve: { conditions: ['source', ...defaultClientConditions] },
  plugins: [react()],
  build: { target: 'es2022' },
})
