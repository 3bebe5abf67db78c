import { existsSync, readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { buildExample, removeBuild, sharedBuild } from './harness.js'

// Test files that build the same demo run at once in several workers: each build must be one
// nobody else empties or overwrites while its server serves it.

const made: string[] = []
afterAll(() => {
  for (const d of made) removeBuild(d)
})

describe('buildExample', () => {
  it('gives builds of one example running at once a directory each, whole, and removing one leaves the other', async () => {
    const [a, b] = await Promise.all([buildExample('react-chat'), buildExample('react-chat')])
    made.push(a, b)
    expect(a).not.toBe(b)
    for (const d of [a, b]) {
      expect(readFileSync(`${d}/index.html`, 'utf8')).toContain('<div id="root">')
      expect(existsSync(`${d}/sw.js`)).toBe(true)
    }
    removeBuild(a)
    expect(existsSync(a)).toBe(false)
    expect(readFileSync(`${b}/index.html`, 'utf8')).toContain('<div id="root">')
  }, 180_000)
})

describe('sharedBuild', () => {
  it('gives files asking at once the same whole build, kept for the next file to serve', async () => {
    const [a, b] = await Promise.all([sharedBuild('react-chat'), sharedBuild('react-chat')])
    expect(a).toBe(b)
    expect(a).toContain('/test/e2e/.tmp/shared/react-chat-')
    expect(readFileSync(`${a}/index.html`, 'utf8')).toContain('<div id="root">')
    expect(existsSync(`${a}/sw.js`)).toBe(true)
    expect(await sharedBuild('react-chat')).toBe(a)
  }, 180_000)
})
