import { readFileSync, readdirSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { blocksOf, type Block } from './readme-parse.js'

export * from './readme-parse.js'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The documents whose examples run: every README a newcomer reads, and the docs that hold code. */
export function readmes(): string[] {
  const packages = readdirSync(join(ROOT, 'packages'))
    .map((name) => join('packages', name, 'README.md'))
    .filter((file) => existsSync(join(ROOT, file)))
    .sort()
  return ['README.md', ...packages, 'examples/README.md', 'test/bench/README.md', 'docs/encryption.md']
}

export function allBlocks(): Block[] {
  return readmes().flatMap((file) => blocksOf(file, readFileSync(join(ROOT, file), 'utf8')))
}
