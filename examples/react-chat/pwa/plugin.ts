import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Plugin } from 'vite'

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })

/**
 * Emits `sw.js`, the service worker that precaches the app shell: every file the build writes
 * plus everything in public/. Hand-written rather than a PWA plugin, since precache-and-serve is
 * all this app needs.
 */
export function serviceWorker(): Plugin {
  let publicDir = ''
  return {
    name: 'colloquy-service-worker',
    apply: 'build',
    // After Vite's own plugins, so index.html is in the bundle (and in the version hash).
    enforce: 'post',
    configResolved(config) {
      publicDir = config.publicDir
    },
    generateBundle(_options, bundle) {
      const built = Object.keys(bundle)
      const copied = publicDir
        ? filesUnder(publicDir).map((f) => relative(publicDir, f).split('\\').join('/'))
        : []
      const shell = [...new Set(['index.html', ...built, ...copied])]
        .filter((f) => !f.endsWith('.map'))
        .sort()
      const version = createHash('sha256').update(shell.join('\n'))
      for (const f of built) {
        const item = bundle[f]
        version.update(
          item.type === 'chunk'
            ? item.code
            : typeof item.source === 'string'
              ? item.source
              : Buffer.from(item.source),
        )
      }
      const template = readFileSync(new URL('./sw.js', import.meta.url), 'utf8')
      // Each placeholder stands exactly once: a second one (in a comment, say) would be the one
      // replaced or left behind, and the worker would fail only when a browser installs it.
      for (const p of ['__VERSION__', '__SHELL__']) {
        if (template.split(p).length !== 2) this.error(`pwa/sw.js must hold ${p} exactly once`)
      }
      const source = template
        .replace('__VERSION__', version.digest('hex').slice(0, 12))
        .replace('__SHELL__', JSON.stringify(shell))
      this.emitFile({ type: 'asset', fileName: 'sw.js', source })
    },
  }
}
