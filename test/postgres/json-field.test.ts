import type { ReplicaChange } from '@colloquy/core'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pushChanges, rpc } from '../server/helpers.js'
import { useInstances } from './instances-harness.js'
import { newSessionMeta } from '../support/sync-push.js'

const pg = useInstances()

const meta = (id: string, title: string, kind: 'user' | 'automation' = 'user'): ReplicaChange =>
  newSessionMeta(id, title, 1, { metadata: {}, kind })

describe('list filters over metas PostgreSQL json cannot unescape', () => {
  it('status and kind filters answer when a meta holds a NUL escape, and match as in core', async () => {
    const s = await pg.start()
    expect(
      (
        await pushChanges(s.url, [
          meta('n1', 'nul\u0000title'),
          meta('n2', 'plain', 'automation'),
          meta('n3', 'back\\u0000slash'),
        ])
      ).map((r) => r.status),
    ).toEqual(['applied', 'applied', 'applied'])
    await rpc(s.url, 'session::set-status', { session_id: 'n2', status: 'done' })
    const ids = async (q: Record<string, unknown>) =>
      ((await rpc(s.url, 'session::list', q)).sessions as Array<{ session_id: string }>)
        .map((i) => i.session_id)
        .sort()
    expect(await ids({ status: 'idle' })).toEqual(['n1', 'n3'])
    expect(await ids({ status: 'done' })).toEqual(['n2'])
    expect(await ids({ kinds: ['user'] })).toEqual(['n1', 'n3'])
    expect(await ids({ kinds: ['automation', 'e2e'] })).toEqual(['n2'])
    expect(await ids({ status: 'idle', kinds: ['user'] })).toEqual(['n1', 'n3'])
    expect(await ids({})).toEqual(['n1', 'n2', 'n3'])
  })
})

/** Every `.ts` file under `dir`. */
const sources = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f))

describe("the server's SQL reads stored JSON only through jsonFieldSql", () => {
  it("no `->`, `->>`, `#>` or `#>>` outside json-field.ts, but on the commit's own documents", () => {
    const src = join(import.meta.dirname, '../../packages/server/src')
    const found: string[] = []
    for (const file of sources(src)) {
      if (file.endsWith(join('postgres', 'json-field.ts'))) continue
      for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries())
        for (const m of line.matchAll(/([\w.]*)\s*(->>?|#>>?)\s*['$]/g))
          // `n.doc`: the documents a commit builds itself (ids escaped by `toDb`, a role core
          // validated, numbers), never a stored text a client wrote.
          if (m[1] !== 'n.doc') found.push(`${file.slice(src.length + 1)}:${i + 1}: ${m[0]}`)
    }
    expect(found).toStrictEqual([])
  })
})
