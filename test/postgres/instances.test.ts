import type { ReplicaChange } from '@colloquy/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { pull, pullAll, pushChanges, rpc, testSocket, user, type ServerProcess } from '../server/helpers.js'
import { useInstances } from './instances-harness.js'
import { newSessionMeta } from '../support/sync-push.js'

// Several `colloquy-server` processes on one PostgreSQL database, as behind a load balancer.
const pg = useInstances()
const start = pg.start

const ws = (s: ServerProcess): string => s.url.replace('http', 'ws')
const entry = (session_id: string, id: string, parent_id: string | null, text: string) => ({
  type: 'entry' as const,
  session_id,
  base_revision: null,
  entry: { id, parent_id, kind: 'message' as const, timestamp: 1, revision: 0, message: user(text) },
})
const meta = (session_id: string, title: string): ReplicaChange =>
  newSessionMeta(session_id, title, 1, { metadata: {} })
const texts = (changes: Array<{ change: any }>): string[] =>
  changes.filter((c) => c.change.type === 'entry').map((c) => c.change.entry.message.content[0].text)
const listenerPids = async (): Promise<number[]> =>
  (
    await pg.cluster.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN colloquy_changes'",
      [pg.db.slice(pg.db.lastIndexOf('/') + 1)],
    )
  ).rows.map((r) => r.pid)
const until = async (
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> => {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('two instances on one database', () => {
  let a: ServerProcess
  let b: ServerProcess
  beforeAll(async () => {
    // A long poll: what arrives live arrives by NOTIFY.
    a = await start('--poll-ms', '60000')
    b = await start('--poll-ms', '60000')
  })

  it('a client on instance 1 sees, live, what a client on instance 2 pushed, and reads it back through the RPC', async () => {
    const s = await testSocket(`${ws(a)}/sync/stream?since=0`)
    await s.next((m) => m.type === 'ready')
    expect(
      await pushChanges(b.url, [
        meta('x1', 'cross'),
        entry('x1', 'x1-a', null, 'pushed on two'),
        { type: 'leaf', session_id: 'x1', entry_id: 'x1-a' },
      ]),
    ).toMatchObject([{ status: 'applied' }, { status: 'applied' }, { status: 'applied' }])
    const got = await s.next((m) => m.type === 'changes' && JSON.stringify(m).includes('pushed on two'))
    expect(got.changes.map((c: any) => c.change.type)).toEqual(['meta', 'entry', 'leaf'])
    // Instance 1's cached sessions follow the other's commits.
    await until(
      async () => (await rpc(a.url, 'session::get', { session_id: 'x1' }))?.meta.message_count === 1,
      5000,
      'instance 1 to see the session',
    )
    expect(
      (await rpc(a.url, 'session::messages', { session_id: 'x1' })).messages.map(
        (m: any) => m.message.content[0].text,
      ),
    ).toEqual(['pushed on two'])
    s.close()
  })

  it('appends to one session on both instances at once form a chain or siblings, nothing lost, as two tabs do', async () => {
    const { session_id } = await rpc(a.url, 'session::create', { title: 'busy' })
    await until(
      async () => (await rpc(b.url, 'session::get', { session_id })) !== null,
      5000,
      'instance 2 to see the session',
    )
    const n = 20
    const done = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        rpc(i % 2 ? a.url : b.url, 'session::append', {
          session_id,
          entry_id: `c${i}`,
          message: user(`m${i}`),
        }),
      ),
    )
    expect(done).toHaveLength(n)
    const ids = new Set(Array.from({ length: n }, (_, i) => `c${i}`))
    // Every append took the leaf its instance read under the session's lock: each parent is
    // an entry that existed before it (a chain, or siblings where two raced for one parent).
    const all = (await pullAll(a.url)).changes
      .filter((c: any) => c.change.type === 'entry' && c.change.session_id === session_id)
      .map((c: any) => c.change.entry)
    expect(new Set(all.map((e: any) => e.id))).toEqual(ids)
    for (const e of all) expect(e.parent_id === null || ids.has(e.parent_id)).toBe(true)
    await until(
      async () =>
        (await rpc(a.url, 'session::get', { session_id })).meta.message_count === n &&
        (await rpc(b.url, 'session::get', { session_id })).meta.message_count === n,
      5000,
      'both instances to count every message',
    )
  })

  it("commits made on both instances at once reach each instance's stream once each, in seq order, the prev chain unbroken", async () => {
    // Each instance delivers its own commits from memory and reads the other's from the log:
    // the two must merge into the one sequence, nothing skipped or sent twice.
    const base = (await pull(a.url, 0, 1)).head
    const streams = await Promise.all([a, b].map((s) => testSocket(`${ws(s)}/sync/stream?since=${base}`)))
    for (const s of streams) await s.next((m) => m.type === 'ready')
    const n = 30
    const sent = Array.from({ length: n }, (_, i) => `interleaved ${i}`)
    await Promise.all(
      sent.map((text, i) =>
        pushChanges(i % 2 ? a.url : b.url, [
          meta(`il-${i}`, text),
          entry(`il-${i}`, `il-${i}-e`, null, text),
        ]),
      ),
    )
    const head = (await pull(a.url, 0, 1)).head
    // A creation and an entry per session, nothing superseded: every seq up to the head.
    expect(head).toBe(base + 2 * n)
    for (const s of streams) {
      await until(
        async () => s.messages.filter((m) => m.type === 'changes').flatMap((m) => m.changes).length >= 2 * n,
        10_000,
        'every commit on the stream',
      )
      await s.sync()
      const batches = s.messages.filter((m) => m.type === 'changes')
      let prev = base
      for (const m of batches) {
        expect(m.prev).toBe(prev)
        prev = m.changes[m.changes.length - 1].seq
      }
      const seqs = batches.flatMap((m) => m.changes.map((c: any) => c.seq))
      expect(seqs).toEqual(Array.from({ length: 2 * n }, (_, i) => base + 1 + i))
      expect(texts(batches.flatMap((m) => m.changes)).sort()).toEqual([...sent].sort())
      s.close()
    }
  })

  it('ids PostgreSQL text cannot hold (NUL) or that look like its escapes round-trip, distinct', async () => {
    const ids = ['nul\u0000id', 'nul\\0id', 'back\\slash', 'nul\\\u0000mix']
    for (const id of ids)
      expect(
        (await pushChanges(b.url, [meta(id, id), entry(id, `${id}/e`, null, id)])).map((r) => r.status),
      ).toEqual(['applied', 'applied'])
    const got = (await pullAll(a.url)).changes.filter(
      (c: any) => c.change.type === 'entry' && ids.includes(c.change.session_id),
    )
    expect(got.map((c: any) => [c.change.session_id, c.change.entry.id])).toEqual(
      ids.map((id) => [id, `${id}/e`]),
    )
    await until(
      async () => (await rpc(a.url, 'session::get', { session_id: ids[0] })) !== null,
      5000,
      'instance 1 to see the session',
    )
    expect((await rpc(a.url, 'session::get', { session_id: ids[1] })).meta.title).toBe(ids[1])
  })

  it('a head changed on disk behind an instance (same version, another meta) is read again before its next commit, not written over from memory', async () => {
    expect(
      (await pushChanges(a.url, [meta('hc', 'first'), entry('hc', 'hc-1', null, 'one')])).map(
        (r) => r.status,
      ),
    ).toEqual(['applied', 'applied'])
    // Another writer changed the row in place and kept its version (as a session deleted and
    // created again elsewhere may): an instance that remembers heads must see the text differ.
    const [{ v }] = await pg.query<{ v: string }>('SELECT v FROM colloquy_sessions WHERE id = $1', ['hc'])
    await pg.query(
      `UPDATE colloquy_sessions SET meta = replace(meta::text, '"title":"first"', '"title":"changed"')::json WHERE id = $1`,
      ['hc'],
    )
    expect(
      (await pg.query<{ v: string }>('SELECT v FROM colloquy_sessions WHERE id = $1', ['hc']))[0].v,
    ).toBe(v)
    expect((await pushChanges(a.url, [entry('hc', 'hc-2', 'hc-1', 'two')])).map((r) => r.status)).toEqual([
      'applied',
    ])
    const got = await rpc(a.url, 'session::get', { session_id: 'hc' })
    expect(got.meta).toMatchObject({ title: 'changed', message_count: 2 })
    const [row] = await pg.query<{ meta: { title: string } }>(
      'SELECT meta FROM colloquy_sessions WHERE id = $1',
      ['hc'],
    )
    expect(row.meta.title).toBe('changed')
  })

  it('a commit held open after taking its sequence number holds back later commits: a pull or stream never skips it', async () => {
    const slow = await start('--poll-ms', '60000', '--test-hold-after-bump', '1500')
    const base = (await pull(b.url, 0, 1)).head
    const s = await testSocket(`${ws(a)}/sync/stream?since=${base}`)
    await s.next((m) => m.type === 'ready')
    const held = pushChanges(slow.url, [
      meta('ooo-1', 'slow writer'),
      entry('ooo-1', 'o1', null, 'held open'),
    ])
    // The slow writer has taken its number and holds its transaction open: the clock row it
    // bumped stays locked until it commits. (A backend with a transaction id is no sign of it: a
    // commit's first statement on a new connection makes the staged term rows' table.)
    await until(
      async () => {
        try {
          await pg.query('SELECT 1 FROM colloquy_clock WHERE id = 1 FOR UPDATE NOWAIT')
          return false
        } catch (e) {
          if ((e as { code?: string }).code === '55P03') return true
          throw e
        }
      },
      10_000,
      'the slow writer to hold its commit open',
    )
    const quick = pushChanges(b.url, [
      meta('ooo-2', 'quick writer'),
      entry('ooo-2', 'o2', null, 'committed meanwhile'),
    ])
    // A client pulling all along, from its cursor.
    let cursor = base
    const seen: any[] = []
    let heldDone = false
    void held.then(() => (heldDone = true))
    while (!heldDone || seen.length < 4) {
      const page = await pull(b.url, cursor)
      seen.push(...page.changes)
      cursor = page.checkpoint
      if (heldDone && !page.more) {
        const rest = await pullAll(b.url, cursor)
        seen.push(...rest.changes)
        cursor = rest.checkpoint
        break
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    await quick
    seen.push(...(await pullAll(b.url, cursor)).changes)
    expect(texts(seen).sort()).toEqual(['committed meanwhile', 'held open'])
    const got = await s.next((m) => m.type === 'changes' && JSON.stringify(m).includes('committed meanwhile'))
    const streamed = s.messages.filter((m) => m.type === 'changes').flatMap((m) => m.changes)
    expect(texts(streamed)).toContain('held open')
    expect(got).toBeTruthy()
    // The held commit took the lower numbers: sequence order is commit order.
    const seqOf = (t: string) =>
      seen.find((c) => c.change.type === 'entry' && c.change.entry.message.content[0].text === t).seq
    expect(seqOf('held open')).toBeLessThan(seqOf('committed meanwhile'))
    s.close()
    await slow.stop()
  })

  it('kill -9 between the version bump and COMMIT: no gap, nothing applied; the retried push applies once', async () => {
    const doomed = await start('--test-crash-after-bump', '1')
    const before = (await pull(b.url, 0, 1)).head
    await expect(
      pushChanges(doomed.url, [meta('k1', 'crash'), entry('k1', 'k1-a', null, 'first try')]),
    ).rejects.toThrow()
    expect(await doomed.exited).toBe('SIGKILL')
    expect((await pull(b.url, 0, 1)).head).toBe(before)
    expect((await pullAll(b.url, before)).changes).toEqual([])
    expect(
      (await pushChanges(b.url, [meta('k1', 'crash'), entry('k1', 'k1-a', null, 'first try')])).map(
        (r) => r.status,
      ),
    ).toEqual(['applied', 'applied'])
    expect(
      (await pushChanges(a.url, [meta('k1', 'crash'), entry('k1', 'k1-a', null, 'first try')])).map(
        (r) => r.status,
      ),
    ).toEqual(['unchanged', 'unchanged'])
    const after = (await pullAll(b.url, before)).changes
    expect(texts(after)).toEqual(['first try'])
    expect(after.map((c) => c.seq)).toEqual([...after.map((c) => c.seq)].sort((x, y) => x - y))
    expect(after[0].seq).toBe(before + 1)
  })

  it('the listening connection terminated with pg_terminate_backend: the instance listens again and catches up', async () => {
    const s = await testSocket(`${ws(a)}/sync/stream?since=${(await pull(a.url, 0, 1)).head}`)
    await s.next((m) => m.type === 'ready')
    const old = await listenerPids()
    expect(old.length).toBe(
      pg.servers.filter((x) => x.child.exitCode === null && x.child.signalCode === null).length,
    )
    await pg.cluster.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [old])
    // Committed while the listeners are down: caught up after they listen again.
    await pushChanges(b.url, [meta('t1', 'while deaf'), entry('t1', 't1-a', null, 'while nobody listened')])
    await until(
      async () => (await listenerPids()).filter((p) => !old.includes(p)).length === old.length,
      10_000,
      're-LISTEN',
    )
    await s.next((m) => m.type === 'changes' && JSON.stringify(m).includes('while nobody listened'), 10_000)
    await pushChanges(b.url, [entry('t1', 't1-b', 't1-a', 'after listening again')])
    await s.next((m) => m.type === 'changes' && JSON.stringify(m).includes('after listening again'), 5000)
    s.close()
  })

  it('a lost notification only delays a change: the safety poll delivers it', async () => {
    const quiet = await start('--test-no-notify')
    const polled = await start('--poll-ms', '200')
    const s = await testSocket(`${ws(polled)}/sync/stream?since=${(await pull(a.url, 0, 1)).head}`)
    await s.next((m) => m.type === 'ready')
    await pushChanges(quiet.url, [meta('n1', 'no notify'), entry('n1', 'n1-a', null, 'never announced')])
    await s.next((m) => m.type === 'changes' && JSON.stringify(m).includes('never announced'), 5000)
    s.close()
    await quiet.stop()
    await polled.stop()
  })

  it('PostgreSQL restarted with pg_ctl restart -m immediate: instances reconnect, nothing acknowledged is lost, live delivery resumes', async () => {
    const acked = await pushChanges(b.url, [
      meta('r1', 'before restart'),
      entry('r1', 'r1-a', null, 'acknowledged before the crash'),
    ])
    expect(acked.map((r) => r.status)).toEqual(['applied', 'applied'])
    const s = await testSocket(`${ws(a)}/sync/stream?since=${(await pull(a.url, 0, 1)).head}`)
    await s.next((m) => m.type === 'ready')
    pg.cluster.restart('immediate')
    // The first requests may meet dead connections (503 session/storage, retry later).
    let results: any[] | undefined
    await until(
      async () => {
        try {
          results = await pushChanges(b.url, [entry('r1', 'r1-b', 'r1-a', 'after the restart')])
          return true
        } catch (e) {
          expect(String(e)).toMatch(/session\/storage|fetch failed/)
          return false
        }
      },
      20_000,
      'a push to succeed after the restart',
    )
    expect(results!.map((r) => r.status)).toEqual(['applied'])
    await s.next((m) => m.type === 'changes' && JSON.stringify(m).includes('after the restart'), 15_000)
    for (const x of [a, b]) {
      const all = texts((await pullAll(x.url)).changes)
      expect(all).toContain('acknowledged before the crash')
      expect(all).toContain('after the restart')
    }
    s.close()
  })
})
