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

// Texts PostgreSQL's `->>` cannot unescape, or that a careless escape-dropping would misread:
// a NUL, lone surrogates high, low and reversed, and a backslash followed by such letters.
const HOSTILE = [
  'nul\u0000x',
  'high\ud800',
  '\udff5low',
  'rev\udc00\ud800',
  'back\\u0000slash',
  'back\\ud800slash',
  'end\\',
  'pair😀',
] as const

describe('every statement that reads a meta passes every text PostgreSQL json cannot unescape', () => {
  it('writes, lists in every order and filter, searches and reads back each text exactly', async () => {
    const s = await pg.start()
    const ids = HOSTILE.map((_, i) => `h${i}`)
    // The file's other test wrote sessions of its own to the same database.
    const mine = (id: string): boolean => ids.includes(id)
    const pushed = await pushChanges(
      s.url,
      HOSTILE.map((h, i) =>
        newSessionMeta(ids[i], `alpha ${h}`, 1000 + i, {
          description: h,
          metadata: { note: h },
          kind: i % 2 ? 'automation' : 'user',
        }),
      ),
    )
    expect(pushed.map((r) => r.status)).toEqual(HOSTILE.map(() => 'applied'))
    for (const [i, h] of HOSTILE.entries())
      await rpc(s.url, 'session::set-status', {
        session_id: ids[i],
        status: i % 3 ? 'error' : 'done',
        reason: h,
      })
    const list = async (q: Record<string, unknown>): Promise<string[]> =>
      ((await rpc(s.url, 'session::list', q)).sessions as Array<{ session_id: string }>)
        .map((x) => x.session_id)
        .filter(mine)
    const asc = [...ids]
    expect(await list({ order: 'created_asc' })).toEqual(asc)
    expect(await list({ order: 'created_desc' })).toEqual([...asc].reverse())
    // set-status wrote them in id order, each at a later time than the one before.
    expect(await list({ order: 'updated_desc' })).toEqual([...asc].reverse())
    expect(await list({ order: 'created_asc', status: 'done' })).toEqual(ids.filter((_, i) => i % 3 === 0))
    expect(await list({ order: 'created_asc', status: 'error' })).toEqual(ids.filter((_, i) => i % 3 !== 0))
    expect(await list({ order: 'created_asc', kinds: ['automation'] })).toEqual(ids.filter((_, i) => i % 2))
    expect(await list({ order: 'created_asc', status: 'done', kinds: ['user'] })).toEqual(
      ids.filter((_, i) => i % 3 === 0 && i % 2 === 0),
    )
    // A page at a time, through the cursor the sort key makes.
    const paged: string[] = []
    let cursor: string | undefined
    do {
      const r = await rpc(s.url, 'session::list', {
        order: 'updated_desc',
        limit: 3,
        ...(cursor ? { cursor } : {}),
      })
      paged.push(...(r.sessions as Array<{ session_id: string }>).map((x) => x.session_id).filter(mine))
      cursor = r.next_cursor ?? undefined
    } while (cursor)
    expect(paged).toEqual([...asc].reverse())
    // Title hits read the meta's `updated_at`, and show the title as stored.
    const found = await rpc(s.url, 'session::search', { query: 'alpha', limit: 50 })
    expect(
      (found.hits as Array<{ session_id: string }>)
        .map((x) => x.session_id)
        .filter(mine)
        .sort(),
    ).toEqual([...asc].sort())
    for (const [i, h] of HOSTILE.entries()) {
      const { meta: session } = await rpc(s.url, 'session::get', { session_id: ids[i] })
      expect(session.title).toBe(`alpha ${h}`)
      expect(session.description).toBe(h)
      expect(session.status_reason).toBe(h)
      expect(session.metadata).toMatchObject({ note: h })
    }
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
