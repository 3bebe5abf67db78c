import react from '@vitejs/plugin-react'
import { defaultClientConditions, defineConfig } from 'vite'
import { serviceWorker } from './pwa/plugin.js'

export default defineConfig({
  root: import.meta.dirname,
  // Workspace packages are read from their TypeScript sources, so the demo builds without
  // building the packages first.
  resolve: { conditions: ['source', ...defaultClientConditions] },
  plugins: [react(), serviceWorker()],
  build: { target: 'es2022' },
})
