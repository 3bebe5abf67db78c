#!/usr/bin/env node
// The API reference (HTML, TypeDoc) of every package entry point in docs/api/, built from the
// same `exports` the API reports read: `pnpm run docs:api`. Built, not committed: the reports in
// etc/api/ are the reviewed record of the public surface; this is for reading it.
import { join, relative, resolve, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Application, Converter } from 'typedoc'
import { packages } from './api-report.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const entries = packages().flatMap(({ pkg, entries }) =>
  entries.map(({ subpath, file }) => ({
    file,
    name: subpath === '.' ? pkg : `${pkg}/${subpath.replace(/^\.\//, '')}`,
  })),
)

const app = await Application.bootstrapWithPlugins({
  name: 'Colloquy',
  entryPoints: entries.map((e) => e.file),
  tsconfig: join(root, 'tsconfig.json'),
  out: join(root, 'docs/api'),
  readme: 'none',
  // The repository's own type-check (`pnpm run typecheck`) is the one that judges the code.
  skipErrorChecking: true,
  excludePrivate: true,
  excludeInternal: true,
})

// TypeDoc names a module after its path ("core/src/wire"); users know it by its import specifier.
app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
  for (const module of context.project.children ?? []) {
    const entry = entries.find((e) => {
      const path = relative(join(root, 'packages'), e.file)
        .replace(/\.tsx?$/, '')
        .replace(/\/index$/, '')
      return path === module.name
    })
    if (entry) module.name = entry.name
  }
})

const project = await app.convert()
if (!project) process.exit(1)
await app.generateOutputs(project)
console.log(`API reference written to ${relative(root, app.options.getValue('out'))}/index.html`)
