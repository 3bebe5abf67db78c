import { describe, expect, it } from 'vitest'
import type { ReplicaChange, SessionEntry, SessionMeta } from '@colloquy/core'
import { postJson, pullAll, pushChanges, rpc, testSocket, useMemoryServer, user } from './helpers.js'

const server = useMemoryServer()

let n = 0
const meta = (session_id: string, title = 'synced'): SessionMeta => ({
  session_id,
  title,
  description: '',
  status: 'idle',
  kind: 'user',
  created_at: 1000,
  updated_at: 1000,
  message_count: 0,
})
const entry = (id: string, parent_id: string | null, text: string, revision = 0): SessionEntry => ({
  id,
  parent_id,
  timestamp: 2000,
  revision,
  kind: 'message',
  message: user(text),
})
/** What an offline client pushes for a new session: the meta that created it, entries, the leaf. */
function newSession(): { id: string; changes: ReplicaChange[] } {
  const id = `c-${++n}`
  return {
    id,
    changes: [
      { type: 'meta', meta: meta(id), create: true },
      { type: 'entry', session_id: id, entry: entry('m1', null, 'hello'), base_revision: null },
      { type: 'entry', session_id: id, entry: entry('m2', 'm1', 'world'), base_revision: null },
      { type: 'leaf', session_id: id, entry_id: 'm2' },
    ],
  }
}

describe('push', () => {
  it('applies a batch in order with one result per mutation, echoing each id', async () => {
    const s = newSession()
    const results = await pushChanges(server.url, s.changes, undefined, 10)
    // Each result says where its key stands in the log: the records this push wrote, in order.
    const log = await pullAll(server.url)
    const seqs = results.map((r) => (r as { seq?: number }).seq!)
    expect(results).toStrictEqual([10, 11, 12, 13].map((id, i) => ({ id, status: 'applied', seq: seqs[i] })))
    expect(seqs.every((q, i) => Number.isSafeInteger(q) && (i === 0 || q > seqs[i - 1]))).toBe(true)
    expect(
      log.changes
        .filter((c: { seq: number }) => seqs.includes(c.seq))
        .map((c: { change: { type: string } }) => c.change.type),
    ).toStrictEqual(['meta', 'entry', 'entry', 'leaf'])
    const got = await rpc(server.url, 'session::messages', { session_id: s.id })
    expect(got.messages.map((m: { entry_id: string }) => m.entry_id)).toStrictEqual(['m1', 'm2'])
    expect((await rpc(server.url, 'session::get', { session_id: s.id })).meta).toMatchObject({
      title: 'synced',
      message_count: 2,
    })
  })

  it('is idempotent: a push retried after its response was lost changes nothing', async () => {
    const s = newSession()
    await pushChanges(server.url, s.changes)
    const head = (await pullAll(server.url)).checkpoint
    const first = (await pullAll(server.url)).changes.filter(
      (c: { change: { session_id?: string; meta?: { session_id: string } } }) =>
        (c.change.session_id ?? c.change.meta?.session_id) === s.id,
    )
    const again = await pushChanges(server.url, s.changes)
    expect(again.map((r) => r.status)).toStrictEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged'])
    // The retry's answer places each key where the first push put it.
    expect(again.map((r) => (r as { seq?: number }).seq)).toStrictEqual(
      first.map((c: { seq: number }) => c.seq),
    )
    expect((await rpc(server.url, 'session::get', { session_id: s.id })).meta.message_count).toBe(2)
    expect((await pullAll(server.url, head)).changes).toStrictEqual([])
  })

  it('accepts an update only on the base it was made from, and stores the pushed revision', async () => {
    const s = newSession()
    await pushChanges(server.url, s.changes)
    // Three local edits collapsed into one update: base 0, resulting revision 3.
    const v3 = await pushChanges(server.url, [
      {
        type: 'entry',
        session_id: s.id,
        entry: entry('m2', 'm1', 'world, edited thrice', 3),
        base_revision: 0,
      },
    ])
    expect(v3[0].status).toBe('applied')
    expect(
      (await rpc(server.url, 'session::get-message', { session_id: s.id, entry_id: 'm2' })).entry,
    ).toMatchObject({ revision: 3 })
    // Another device still on revision 0: conflict, carrying the server's version.
    const stale = await pushChanges(server.url, [
      { type: 'entry', session_id: s.id, entry: entry('m2', 'm1', 'older edit', 1), base_revision: 0 },
    ])
    expect(stale[0]).toMatchObject({
      status: 'conflict',
      current: {
        id: 'm2',
        revision: 3,
        message: { content: [{ type: 'text', text: 'world, edited thrice' }] },
      },
    })
    // A revision that does not grow is refused too.
    const same = await pushChanges(server.url, [
      { type: 'entry', session_id: s.id, entry: entry('m2', 'm1', 'other', 3), base_revision: 3 },
    ])
    expect(same[0].status).toBe('conflict')
    // Retrying the accepted update is a no-op.
    expect(
      (
        await pushChanges(server.url, [
          {
            type: 'entry',
            session_id: s.id,
            entry: entry('m2', 'm1', 'world, edited thrice', 3),
            base_revision: 0,
          },
        ])
      )[0].status,
    ).toBe('unchanged')
  })

  it('a meta change naming its edited fields leaves the others as the server has them', async () => {
    const s = newSession()
    await pushChanges(server.url, s.changes)
    // Device 1 renamed the session, device 2 marked it done, both offline.
    const renamed = await pushChanges(server.url, [
      { type: 'meta', meta: { ...meta(s.id, 'renamed'), status: 'idle' }, fields: ['title'] },
    ])
    const done = await pushChanges(server.url, [
      {
        type: 'meta',
        meta: { ...meta(s.id, 'synced'), status: 'done' },
        fields: ['status', 'status_reason'],
      },
    ])
    expect([renamed[0].status, done[0].status]).toStrictEqual(['applied', 'applied'])
    expect((await rpc(server.url, 'session::get', { session_id: s.id })).meta).toMatchObject({
      title: 'renamed',
      status: 'done',
    })
    const bad = await postJson(`${server.url}/sync/push`, {
      mutations: [{ id: 1, change: { type: 'meta', meta: meta(s.id), fields: ['message_count'] } }],
    })
    expect(bad.status).toBe(400)
  })

  it("refuses mutations on a deleted session with the contract's error, and never resurrects it", async () => {
    const s = newSession()
    await pushChanges(server.url, s.changes)
    await rpc(server.url, 'session::delete', { session_id: s.id })
    const results = await pushChanges(server.url, [
      { type: 'meta', meta: meta(s.id, 'edited offline') },
      { type: 'entry', session_id: s.id, entry: entry('m3', 'm2', 'late'), base_revision: null },
      { type: 'leaf', session_id: s.id, entry_id: 'm3' },
    ])
    expect(results.map((r) => [r.status, 'code' in r ? r.code : undefined])).toStrictEqual([
      ['rejected', 'session/not_found'],
      ['rejected', 'session/not_found'],
      ['rejected', 'session/not_found'],
    ])
    expect(await rpc(server.url, 'session::get', { session_id: s.id })).toBeNull()
  })

  it("keeps the client's parent chain: a pushed root stays a root even when the session has a leaf", async () => {
    const s = newSession()
    await pushChanges(server.url, s.changes)
    expect(
      (
        await pushChanges(server.url, [
          { type: 'entry', session_id: s.id, entry: entry('r2', null, 'second root'), base_revision: null },
        ])
      )[0].status,
    ).toBe('applied')
    expect(
      (await rpc(server.url, 'session::get-message', { session_id: s.id, entry_id: 'r2' })).entry.parent_id,
    ).toBeNull()
    const orphan = await pushChanges(server.url, [
      { type: 'entry', session_id: s.id, entry: entry('x', 'ghost', 'orphan'), base_revision: null },
    ])
    expect(orphan[0]).toMatchObject({ status: 'rejected', code: 'session/parent_not_found' })
  })

  it('works over the live stream too: a push message is answered with its results', async () => {
    const s = newSession()
    const ws = await testSocket(`${server.url.replace('http', 'ws')}/sync/stream?since=0`)
    ws.send({ type: 'push', id: 'p1', mutations: s.changes.map((change, i) => ({ id: i, change })) })
    const answer = await ws.next((m) => m.type === 'pushed' && m.id === 'p1')
    expect(answer.results.map((r: { status: string }) => r.status)).toStrictEqual([
      'applied',
      'applied',
      'applied',
      'applied',
    ])
    ws.send({ type: 'push', id: 'p2', mutations: 'nope' })
    expect(await ws.next((m) => m.type === 'error' && m.id === 'p2')).toMatchObject({
      error: { code: 'session/invalid_request' },
    })
    ws.close()
  })
})
