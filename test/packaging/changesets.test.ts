// Releases go through changesets (see "Contributing" in the root README). `changeset status`
// fails when a package changed since `main` and no changeset says how it is released, and
// when a changeset does not parse or names no package of the workspace; every published package
// keeps a CHANGELOG.md whose newest entry is its current version.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../docs/readme-blocks.js'

interface Manifest {
  name: string
  version: string
  private?: boolean
}
interface ReleasePlan {
  changesets: { id: string; releases: { name: string; type: string }[] }[]
  releases: { name: string; type: string; newVersion: string }[]
}

const published = readdirSync(join(ROOT, 'packages'))
  .map((name) => join(ROOT, 'packages', name))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest }))
  .filter(({ manifest }) => !manifest.private)

describe('changesets', () => {
  it('`changeset status` accepts the pending changesets and covers every changed package', () => {
    const out = mkdtempSync(join(tmpdir(), 'colloquy-changesets-'))
    try {
      const plan = join(out, 'plan.json')
      const status = spawnSync(
        process.execPath,
        [join(ROOT, 'node_modules/@changesets/cli/bin.js'), 'status', '--output', plan],
        { cwd: ROOT, encoding: 'utf8' },
      )
      expect(status.status, status.stdout + status.stderr).toBe(0)
      const { changesets, releases } = JSON.parse(readFileSync(plan, 'utf8')) as ReleasePlan
      const pending = readdirSync(join(ROOT, '.changeset'))
        .filter((f) => f.endsWith('.md') && f !== 'README.md')
        .map((f) => f.slice(0, -3))
      expect(changesets.map((c) => c.id).sort()).toEqual(pending.sort())
      const names = published.map((p) => p.manifest.name)
      // The private workspace packages (examples, tests) are in the plan as `none`: never versioned.
      for (const r of releases.filter((r) => r.type !== 'none'))
        expect(names, `${r.name} is released but is no published package`).toContain(r.name)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })

  it.each(published.map((p) => [p.manifest.name, p] as const))(
    '%s has a CHANGELOG.md whose newest entry is its version',
    (name, { dir, manifest }) => {
      const log = readFileSync(join(dir, 'CHANGELOG.md'), 'utf8')
      expect(log.startsWith(`# ${name}\n`)).toBe(true)
      expect(log.match(/^## (\S+)/m)?.[1]).toBe(manifest.version)
    },
  )
})
