import type { ReplicaChange } from '@colloquy/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pushChanges, rpc, startServer, user, type ServerProcess } from '../server/helpers.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'
import { newSessionMeta } from '../support/sync-push.js'

// Tenancy across instances: an instance's view of who owns an id can be stale (another instance
// created, deleted or re-created it a moment ago). The owner is checked again in the commit,
// under the session's lock, so the stale view never hands out or writes another's session.
const ALICE = 'alice-token-0123456789'
const BOB = 'bob-token-0123456789'
let cluster: TestCluster
let db: string
const servers: ServerProcess[] = []
const start = async (...args: string[]): Promise<ServerProcess> => {
  const s = await startServer([
    '--postgres',
    db,
    '--token',
    `alice=${ALICE}`,
    '--token',
    `bob=${BOB}`,
    '--requests-per-second',
    '0',
    ...args,
  ])
  servers.push(s)
  return s
}
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(async () => {
  for (const s of servers) await s.stop('SIGKILL')
  cluster?.stop()
})

const meta = (session_id: string, title: string): ReplicaChange =>
  newSessionMeta(session_id, title, 1, { metadata: {} })
const entry = (session_id: string, id: string, text: string): ReplicaChange => ({
  type: 'entry',
  session_id,
  base_revision: null,
  entry: { id, parent_id: null, kind: 'message', timestamp: 1, revision: 0, message: user(text) },
})
const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? String(e),
  )
const texts = async (url: string, session_id: string, token: string): Promise<string[]> =>
  (await rpc(url, 'session::messages', { session_id }, token)).messages.map(
    (m: any) => m.message.content[0].text,
  )

describe('two instances that do not hear of each other (no NOTIFY, no poll): stale views', () => {
  let a: ServerProcess
  let b: ServerProcess
  beforeAll(async () => {
    db = await cluster.createDatabase()
    a = await start('--test-no-notify', '--poll-ms', '600000')
    // Alice's session exists before instance 2 starts: both instances know it as hers.
    await rpc(a.url, 'session::ensure', { session_id: 'stale', title: 'alice' }, ALICE)
    b = await start('--test-no-notify', '--poll-ms', '600000')
  })

  it("ensure, create-push and entries for an id Bob created on the other instance: not found, Bob's session untouched", async () => {
    await rpc(b.url, 'session::ensure', { session_id: 'e1', title: 'bob' }, BOB)
    await rpc(
      b.url,
      'session::append',
      { session_id: 'e1', entry_id: 'b1', message: user('bob writes') },
      BOB,
    )
    expect(await rpc(a.url, 'session::get', { session_id: 'e1' }, ALICE)).toBeNull()
    expect(
      await codeOf(
        rpc(a.url, 'session::ensure', { session_id: 'e1', title: 'alice', metadata: { mine: true } }, ALICE),
      ),
    ).toBe('session/not_found')
    const results = await pushChanges(a.url, [meta('e1', 'alice'), entry('e1', 'a1', 'alice writes')], ALICE)
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(results.map((r) => (r.status === 'rejected' ? r.code : ''))).toEqual([
      'session/not_found',
      'session/not_found',
    ])
    const got = await rpc(b.url, 'session::get', { session_id: 'e1' }, BOB)
    expect(got.meta).toMatchObject({ title: 'bob', metadata: { owner: 'bob' } })
    expect(got.meta.metadata).not.toHaveProperty('mine')
    expect(await texts(b.url, 'e1', BOB)).toEqual(['bob writes'])
  })

  it("Alice's session deleted and re-created by Bob elsewhere: her stale instance writes nothing into Bob's", async () => {
    expect(await rpc(b.url, 'session::delete', { session_id: 'stale' }, ALICE)).toEqual({ deleted: true })
    await rpc(b.url, 'session::ensure', { session_id: 'stale', title: 'bob now' }, BOB)
    // Instance 1 still believes the id is Alice's.
    expect(
      await codeOf(
        rpc(
          a.url,
          'session::append',
          { session_id: 'stale', entry_id: 'x', message: user('alice, stale') },
          ALICE,
        ),
      ),
    ).toBe('session/not_found')
    expect(
      await codeOf(rpc(a.url, 'session::set-meta', { session_id: 'stale', title: 'hijack' }, ALICE)),
    ).toBe('session/not_found')
    expect(
      await codeOf(rpc(a.url, 'session::set-status', { session_id: 'stale', status: 'working' }, ALICE)),
    ).toBe('session/not_found')
    expect(await codeOf(rpc(a.url, 'session::ensure', { session_id: 'stale' }, ALICE))).toBe(
      'session/not_found',
    )
    expect(
      (await pushChanges(a.url, [entry('stale', 'y', 'alice push, stale')], ALICE)).map((r) => r.status),
    ).toEqual(['rejected'])
    expect(
      (await pushChanges(a.url, [{ type: 'delete', session_id: 'stale' }], ALICE)).map((r) => r.status),
    ).toEqual(['unchanged'])
    expect(await rpc(a.url, 'session::delete', { session_id: 'stale' }, ALICE)).toEqual({ deleted: false })
    const got = await rpc(b.url, 'session::get', { session_id: 'stale' }, BOB)
    expect(got.meta).toMatchObject({
      title: 'bob now',
      status: 'idle',
      message_count: 0,
      metadata: { owner: 'bob' },
    })
    expect(await texts(b.url, 'stale', BOB)).toEqual([])
  })
})

describe('two principals racing on the same ids through two instances', () => {
  it("each id goes to one principal; the other gets not found; no session holds the other principal's writes", async () => {
    db = await cluster.createDatabase()
    const a = await start()
    const b = await start()
    const ids = Array.from({ length: 30 }, (_, i) => `race-${i}`)
    const who = [
      { name: 'alice', token: ALICE, url: a.url },
      { name: 'bob', token: BOB, url: b.url },
    ]
    // Each principal, for each id: an ensure, then a push creating it with an entry (the same
    // id may be won by either, on either path).
    const outcomes = await Promise.all(
      ids.flatMap((id, i) =>
        who.map(async (p) => {
          const ensured = await rpc(
            p.url,
            'session::ensure',
            { session_id: id, title: p.name },
            p.token,
          ).then(
            (r) => ({ owner: r.meta.metadata.owner as string }),
            (e: { code?: string }) => ({ code: e.code }),
          )
          const pushed = await pushChanges(
            p.url,
            [
              meta(id, p.name),
              entry(id, `${p.name}-${i}`, `${p.name} writes`),
              { type: 'leaf', session_id: id, entry_id: `${p.name}-${i}` },
            ],
            p.token,
          )
          return { id, p: p.name, ensured, pushed }
        }),
      ),
    )
    for (const id of ids) {
      const mine = outcomes.filter((o) => o.id === id)
      const winners = mine.filter((o) => 'owner' in o.ensured)
      // An ensure answers its caller's session or not found, never the other's.
      for (const o of mine)
        expect(o.ensured).toEqual('owner' in o.ensured ? { owner: o.p } : { code: 'session/not_found' })
      expect(winners).toHaveLength(1)
      const owner = winners[0].p
      const token = owner === 'alice' ? ALICE : BOB
      for (const url of [a.url, b.url]) {
        // Either instance answers the same once it has the commits (the read may run ahead).
        const got = await rpc(url, 'session::get', { session_id: id }, token)
        if (got) expect(got.meta.metadata.owner).toBe(owner)
      }
      expect(await texts(owner === 'alice' ? a.url : b.url, id, token)).toEqual([`${owner} writes`])
      for (const o of mine) {
        if (o.p === owner)
          expect(o.pushed.map((r) => r.status)).toEqual([
            expect.stringMatching(/applied|unchanged/),
            'applied',
            'applied',
          ])
        else
          expect(o.pushed.map((r) => (r.status === 'rejected' ? r.code : r.status))).toEqual([
            'session/not_found',
            'session/not_found',
            'session/not_found',
          ])
      }
    }
  }, 60_000)
})

describe('quotas counted from the database', () => {
  it("a principal's sessions and bytes count across instances: what one instance admitted, the other refuses past the quota", async () => {
    db = await cluster.createDatabase()
    const a = await start('--max-sessions', '3', '--max-stored-bytes', '20000')
    const b = await start('--max-sessions', '3', '--max-stored-bytes', '20000')
    await rpc(a.url, 'session::ensure', { session_id: 'q1' }, ALICE)
    await rpc(b.url, 'session::ensure', { session_id: 'q2' }, ALICE)
    await rpc(a.url, 'session::ensure', { session_id: 'q3' }, ALICE)
    for (const url of [a.url, b.url])
      expect(await codeOf(rpc(url, 'session::create', {}, ALICE))).toBe('session/invalid_request')
    // Bob is counted apart.
    await rpc(b.url, 'session::ensure', { session_id: 'bq' }, BOB)
    const text = 'x'.repeat(3000)
    let appended = 0
    for (let i = 0; ; i++) {
      const code = await codeOf(
        rpc(i % 2 ? a.url : b.url, 'session::append', { session_id: 'q1', message: user(text) }, ALICE),
      )
      if (code !== 'ok') {
        expect(code).toBe('session/invalid_request')
        break
      }
      appended++
      expect(appended).toBeLessThan(10)
    }
    expect(appended).toBeGreaterThan(3)
    // Refused on both instances, and nothing of the refused write is stored.
    for (const url of [a.url, b.url])
      expect(
        await codeOf(rpc(url, 'session::append', { session_id: 'q2', message: user(text) }, ALICE)),
      ).toBe('session/invalid_request')
    expect((await rpc(a.url, 'session::messages', { session_id: 'q1' }, ALICE)).messages).toHaveLength(
      appended,
    )
    // Deleting on one instance frees room on the other.
    await rpc(a.url, 'session::delete', { session_id: 'q1' }, ALICE)
    await rpc(b.url, 'session::append', { session_id: 'q2', message: user(text) }, ALICE)
    await rpc(b.url, 'session::ensure', { session_id: 'q4' }, ALICE)
  }, 60_000)
})
