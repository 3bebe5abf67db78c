import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { transformWithEsbuild, type Plugin } from 'vite'
import { blocksOf } from './readme-parse.js'

const REQUEST = /^\/?(.*README\.md)\.L(\d+)\.(tsx?)(?:\?(.*))?$/
const MODULE = /^(.*README\.md)\?docs-block=(\d+)&lang=(tsx?)(?:&.*)?$/

/**
 * Serves a README's fenced block as a module: `/<readme>.L<line>.tsx` is the block opening on
 * that line. The module's id is the README itself (with a query), so its imports resolve from
 * that package as an app's would (Vite resolves bare imports beside an importer that exists).
 * The browser suite imports README examples this way to run them in a page.
 */
export function readmeBlocks(root: string): Plugin {
  return {
    name: 'colloquy-readme-blocks',
    enforce: 'pre',
    resolveId(id) {
      const m = REQUEST.exec(id.startsWith(root) ? id.slice(root.length) : id)
      return m ? `${join(root, m[1])}?docs-block=${m[2]}&lang=${m[3]}${m[4] ? `&${m[4]}` : ''}` : null
    },
    async load(id) {
      const m = MODULE.exec(id)
      if (!m || !m[1].startsWith(root)) return null
      const file = m[1].slice(root.length).replace(/^\//, '')
      const block = blocksOf(file, readFileSync(m[1], 'utf8')).find((b) => b.line === Number(m[2]))
      if (!block) throw new Error(`${file} has no block opening on line ${m[2]}`)
      const lang = m[3] as 'ts' | 'tsx'
      const out = await transformWithEsbuild(`${block.text}\nexport {}\n`, `${m[1]}.${lang}`, {
        loader: lang,
        jsx: 'automatic',
        target: 'es2022',
      })
      return { code: out.code, map: out.map }
    },
  }
}
