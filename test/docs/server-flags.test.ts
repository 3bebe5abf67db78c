// `colloquy-server --help` and the server README's table of CLI options name the same flags: a
// flag added to one and not the other fails here.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { ROOT } from './readme-blocks.js'

const flagsIn = (text: string): string[] =>
  [...new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]))].sort()

it('the server README documents every flag of --help, and no other', () => {
  const help = execFileSync(
    process.execPath,
    [join(ROOT, 'packages/server/bin/colloquy-server.js'), '--help'],
    { encoding: 'utf8' },
  )
  // Only the options' own column: the descriptions mention other flags ("with --postgres").
  const helpFlags = flagsIn(
    help
      .split('\n')
      .map((l) => /^\s*(?:-\w, )?(--[a-z-]+)/.exec(l)?.[1] ?? '')
      .join('\n'),
  )
  const readme = readFileSync(join(ROOT, 'packages/server/README.md'), 'utf8')
  const rows = readme
    .split('\n')
    .filter((l) => /^\| `-/.test(l))
    .map((l) => l.split('|')[1])
  expect(helpFlags.length).toBeGreaterThan(20)
  expect(flagsIn(rows.join('\n'))).toEqual(helpFlags)
})
