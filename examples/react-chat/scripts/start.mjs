// `npm start`: the demo and its sync server on one origin. Starts colloquy-server on its
// embedded file storage, builds the app with sync on by default, and serves it with the sync
// routes proxied to the server. Ctrl-C stops both.
import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, preview } from 'vite'

const here = dirname(fileURLToPath(import.meta.url))
const app = join(here, '..')
const repo = join(app, '../..')
const port = Number(process.env.PORT ?? 5173)
const serverPort = Number(process.env.COLLOQUY_SERVER_PORT ?? 8787)
const dataDir = process.env.COLLOQUY_DATA_DIR ?? join(app, '.data')
mkdirSync(dataDir, { recursive: true })

const server = spawn(
  process.execPath,
  [
    join(repo, 'packages/server/dist/cli.js'),
    '--port',
    String(serverPort),
    '--data-dir',
    dataDir,
    '--origin',
    `http://127.0.0.1:${port}`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
const serverUrl = await new Promise((resolve, reject) => {
  let out = ''
  server.stdout.on('data', (d) => {
    out += d
    const m = /listening on (\S+)/.exec(out)
    if (m) resolve(m[1])
  })
  server.once('exit', (code) => reject(new Error(`colloquy-server exited with code ${code}`)))
})
const stop = () => {
  server.kill('SIGTERM')
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)

process.env.VITE_COLLOQUY_SYNC = 'same-origin'
await build({ root: app, configFile: join(app, 'vite.config.ts'), logLevel: 'warn' })
// Every route of the sync protocol goes to the server; the rest is the app.
const target = serverUrl
const routes = ['/sync', '/rpc', '/events', '/health', '/meta', '/sessions']
const proxy = Object.fromEntries(routes.map((r) => [r, { target, ws: true, changeOrigin: true }]))
const site = await preview({
  root: app,
  configFile: join(app, 'vite.config.ts'),
  preview: { host: '127.0.0.1', port, strictPort: true, proxy },
})
const url = site.resolvedUrls?.local[0] ?? `http://127.0.0.1:${port}/`
console.log(`\n  Colloquy demo: ${url}\n  sync server:   ${serverUrl} (data in ${dataDir})\n`)
