// What every package says about itself, checked for all of them at once so a new package cannot
// miss it: the MIT license and where its source lives in every package.json, and in each
// published package the root LICENSE (the same text) inside what `npm pack` would publish.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../docs/readme-blocks.js'

interface Manifest {
  name: string
  private?: boolean
  license?: string
  repository?: unknown
}

const REPOSITORY = 'https://github.com/colloquy/colloquy.git'
const folders = (parent: string): string[] =>
  readdirSync(join(ROOT, parent))
    .map((name) => `${parent}/${name}`)
    .filter((dir) => existsSync(join(ROOT, dir, 'package.json')))
/** Every package.json of the workspace (pnpm-workspace.yaml: packages/*, examples/*, test) and the root's. */
const workspace = ['.', ...folders('packages'), ...folders('examples'), 'test']
const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Manifest
const published = workspace.filter((dir) => !manifest(dir).private)

describe('package metadata', () => {
  it('finds the published packages', () => {
    expect(published).toContain('packages/core')
    expect(published).toContain('packages/kit')
    expect(published.every((dir) => dir.startsWith('packages/'))).toBe(true)
  })

  it.each(workspace)('%s declares the MIT license and its place in the repository', (dir) => {
    const m = manifest(dir)
    expect(m.license).toBe('MIT')
    expect(m.repository).toEqual({ type: 'git', url: REPOSITORY, ...(dir !== '.' && { directory: dir }) })
  })

  it.each(published)('%s publishes the root LICENSE', (dir) => {
    expect(readFileSync(join(ROOT, dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'))
    const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: join(ROOT, dir),
      encoding: 'utf8',
      env: { ...process.env, npm_config_update_notifier: 'false' },
    })
    expect(packed.status, packed.stderr).toBe(0)
    const [{ files }] = JSON.parse(packed.stdout) as [{ files: { path: string }[] }]
    expect(files.map((f) => f.path)).toContain('LICENSE')
  })
})
