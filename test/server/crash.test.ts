import { appendFile, mkdir, readFile, rename, rmdir, symlink, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createStore, type ReplicaChange, type SessionEntry, type Store } from '@colloquy/core'
import { fileStorage } from '../../packages/server/src/storage/file/file-storage.js'
import { sessionFileName } from '../../packages/server/src/storage/file/file-names.js'
import {
  cleanupAfterEach,
  comparable,
  pullAll,
  pushChanges,
  replica,
  rpc,
  snapshot,
  startServer,
  user,
  type ServerProcess,
} from './helpers.js'

// Fault injection against a real server process over a real data directory.
const { defer, dataDir } = cleanupAfterEach('crash')

async function serve(dir: string, ...args: string[]): Promise<ServerProcess> {
  const s = await startServer(['--data-dir', dir, ...args])
  defer(() => s.stop('SIGKILL'))
  return s
}

/** The data directory as the storage reads it back (the server must be stopped). */
async function onDisk(dir: string): Promise<Store> {
  const store = await createStore({ storage: fileStorage({ dir, warn: () => {} }), multiTab: false })
  defer(() => store.close())
  return store
}

/** A replica of everything the server's change log says, pulled from 0 in small pages. */
async function pulled(url: string, since = 0, into?: Store): Promise<Store> {
  const client = into ?? (await replica())
  if (!into) defer(() => client.close())
  let checkpoint = since
  for (;;) {
    const res = await fetch(`${url}/sync/pull?since=${checkpoint}&limit=7`)
    const page = (await res.json()) as {
      changes: Array<{ change: ReplicaChange }>
      checkpoint: number
      more: boolean
    }
    await client.applyReplica(
      page.changes.map((c) => c.change),
      { policy: 'pull' },
    )
    checkpoint = page.checkpoint
    if (!page.more) return client
  }
}

const entry = (id: string, parent_id: string | null, text: string): SessionEntry => ({
  id,
  parent_id,
  timestamp: 5,
  revision: 0,
  kind: 'message',
  message: user(text),
})
const meta = (session_id: string) => ({
  session_id,
  title: session_id,
  description: '',
  status: 'idle' as const,
  kind: 'user' as const,
  created_at: 1,
  updated_at: 1,
  message_count: 0,
})

/** Client k's i-th batch: the session's creation first, then 10 chained entries and the leaf. */
function batch(k: number, i: number): ReplicaChange[] {
  const session_id = `client-${k}`
  const out: ReplicaChange[] = i === 0 ? [{ type: 'meta', meta: meta(session_id), create: true }] : []
  for (let j = 0; j < 10; j++) {
    const n = i * 10 + j
    out.push({
      type: 'entry',
      session_id,
      entry: entry(`e${n}`, n === 0 ? null : `e${n - 1}`, `k${k} n${n}`),
      base_revision: null,
    })
  }
  out.push({ type: 'leaf', session_id, entry_id: `e${i * 10 + 9}` })
  return out
}

describe('crash safety of the server', () => {
  it('killed mid-push and restarted: acknowledged pushes survive, retries are idempotent, change log and files agree', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const clients = 4
    const acked: number[] = Array(clients).fill(-1)
    let stop = false
    const writers = Array.from({ length: clients }, async (_, k) => {
      for (let i = 0; !stop && i < 1000; i++) {
        const results = await pushChanges(a.url, batch(k, i)).catch(() => undefined)
        if (!results) return
        expect(results.every((r) => r.status === 'applied')).toBe(true)
        acked[k] = i
      }
    })
    // Kill once every client has had two pushes acknowledged (and others are in flight).
    for (let waited = 0; Math.min(...acked) < 1 && waited < 20_000; waited += 20)
      await new Promise((r) => setTimeout(r, 20))
    await a.stop('SIGKILL')
    stop = true
    await Promise.all(writers)
    expect(Math.min(...acked)).toBeGreaterThanOrEqual(1)

    const b = await serve(dir)
    for (let k = 0; k < clients; k++) {
      // Every acknowledged batch is there.
      const got = await rpc(b.url, 'session::get-message', {
        session_id: `client-${k}`,
        entry_id: `e${acked[k] * 10 + 9}`,
      })
      expect(got?.entry.message.content[0].text).toBe(`k${k} n${acked[k] * 10 + 9}`)
      // The client retries from its first unacknowledged batch, and one more for good measure.
      for (let i = 0; i <= acked[k] + 1; i++) {
        const results = await pushChanges(b.url, batch(k, i))
        expect(
          results.every((r) => r.status === 'applied' || r.status === 'unchanged'),
          JSON.stringify(results),
        ).toBe(true)
      }
      const { meta: m } = await rpc(b.url, 'session::get', { session_id: `client-${k}` })
      expect(m.message_count).toBe((acked[k] + 2) * 10)
      const path = await rpc(b.url, 'session::messages', { session_id: `client-${k}`, limit: 500 })
      expect(path.messages.map((x: { entry_id: string }) => x.entry_id)).toStrictEqual(
        Array.from({ length: (acked[k] + 2) * 10 }, (_, n) => `e${n}`),
      )
    }
    const client = await pulled(b.url)
    await b.stop()
    expect(comparable(await snapshot(client))).toStrictEqual(comparable(await snapshot(await onDisk(dir))))
  })

  it('dies just before a commit point: the push left no trace, its retry applies', async () => {
    const dir = await dataDir()
    // Transaction 1 creates the session, 2 appends, 3 is the push that dies.
    const a = await serve(dir, '--test-crash-before-commit', '3')
    const { session_id } = await rpc(a.url, 'session::create', { title: 'crashy' })
    const { entry_id } = await rpc(a.url, 'session::append', { session_id, message: user('committed') })
    const push: ReplicaChange[] = [
      { type: 'entry', session_id, entry: entry('lost-1', entry_id, 'in flight'), base_revision: null },
      { type: 'leaf', session_id, entry_id: 'lost-1' },
    ]
    await expect(pushChanges(a.url, push)).rejects.toThrow()
    expect(await a.exited).toBe('SIGKILL')

    const b = await serve(dir)
    expect(await rpc(b.url, 'session::get-message', { session_id, entry_id: 'lost-1' })).toBeNull()
    expect(JSON.stringify((await pullAll(b.url)).changes)).not.toContain('lost-1')
    expect((await pushChanges(b.url, push)).map((r) => r.status)).toStrictEqual(['applied', 'applied'])
    const client = await pulled(b.url)
    await b.stop()
    expect(comparable(await snapshot(client))).toStrictEqual(comparable(await snapshot(await onDisk(dir))))
  })

  it('dies just after a commit point, before the session files: the push is redone from the journal, its retry is a no-op', async () => {
    const dir = await dataDir()
    const a = await serve(dir, '--test-crash-at-commit', '3')
    const { session_id } = await rpc(a.url, 'session::create', { title: 'crashy' })
    const { entry_id } = await rpc(a.url, 'session::append', { session_id, message: user('committed') })
    const push: ReplicaChange[] = [
      { type: 'entry', session_id, entry: entry('kept-1', entry_id, 'in the journal'), base_revision: null },
      { type: 'leaf', session_id, entry_id: 'kept-1' },
    ]
    await expect(pushChanges(a.url, push)).rejects.toThrow()
    expect(await a.exited).toBe('SIGKILL')
    const file = join(dir, sessionFileName(session_id))
    expect(await readFile(file, 'utf8')).not.toContain('kept-1')

    const b = await serve(dir)
    expect(await readFile(file, 'utf8')).toContain('kept-1')
    expect(
      (await rpc(b.url, 'session::messages', { session_id })).messages.map(
        (m: { entry_id: string }) => m.entry_id,
      ),
    ).toStrictEqual([entry_id, 'kept-1'])
    expect(JSON.stringify((await pullAll(b.url)).changes)).toContain('kept-1')
    // The client never saw a response: it retries, and nothing changes.
    expect((await pushChanges(b.url, push)).map((r) => r.status)).toStrictEqual(['unchanged', 'unchanged'])
    const client = await pulled(b.url)
    await b.stop()
    expect(comparable(await snapshot(client))).toStrictEqual(comparable(await snapshot(await onDisk(dir))))
  })

  it('a session file with a torn last line is repaired on start', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const { session_id } = await rpc(a.url, 'session::create', { title: 'torn' })
    await rpc(a.url, 'session::append', { session_id, message: user('whole') })
    await a.stop()
    const file = join(dir, sessionFileName(session_id))
    await appendFile(file, '{"type":"append","entry":{"id":"half","parent_id":nu')

    const b = await serve(dir)
    expect(
      (await rpc(b.url, 'session::messages', { session_id })).messages.map(
        (m: { message: { content: Array<{ text: string }> } }) => m.message.content[0].text,
      ),
    ).toStrictEqual(['whole'])
    await rpc(b.url, 'session::append', { session_id, message: user('after repair') })
    await b.stop()
    const text = await readFile(file, 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    expect(text).not.toContain('"half"')
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .every((l) => JSON.parse(l)),
    ).toBeTruthy()
    const store = await onDisk(dir)
    expect((await store.messages({ session_id })).messages).toHaveLength(2)
  })

  it('a client with a stale checkpoint catches up across restarts, deletions and rewrites', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const keep = (await rpc(a.url, 'session::create', { title: 'keep' })).session_id
    const drop = (await rpc(a.url, 'session::create', { title: 'drop' })).session_id
    const first = await rpc(a.url, 'session::append', { session_id: keep, message: user('v0') })
    await rpc(a.url, 'session::append', { session_id: drop, message: user('doomed') })
    const client = await pulled(a.url)
    const stale = (await pullAll(a.url)).checkpoint

    await rpc(a.url, 'session::update-message', {
      session_id: keep,
      entry_id: first.entry_id,
      content: [{ type: 'text', text: 'v1' }],
    })
    await rpc(a.url, 'session::append', { session_id: keep, message: user('child') })
    await rpc(a.url, 'session::delete', { session_id: drop })
    await a.stop('SIGKILL')
    const b = await serve(dir)
    await rpc(b.url, 'session::update-message', {
      session_id: keep,
      entry_id: first.entry_id,
      content: [{ type: 'text', text: 'v2' }],
    })
    await rpc(b.url, 'session::ensure', { session_id: drop, title: 'reborn' })
    await rpc(b.url, 'session::set-active-leaf', { session_id: keep, entry_id: first.entry_id })

    await pulled(b.url, stale, client)
    await b.stop()
    const disk = await snapshot(await onDisk(dir))
    expect(comparable(await snapshot(client))).toStrictEqual(comparable(disk))
    expect(disk[drop]).toMatchObject({ meta: { title: 'reborn', message_count: 0 }, entries: [] })
    expect(disk[keep].entries.find((e) => e.id === first.entry_id)).toMatchObject({ revision: 2 })
  })

  it('a directory planted where a session file goes: that session alone waits, others keep writing, restarts serve it, and it is written once the obstacle is gone', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const other = (await rpc(a.url, 'session::create', { title: 'other' })).session_id
    const blocked = 'blocked session'
    const path = join(dir, sessionFileName(blocked))
    await mkdir(path)
    await rpc(a.url, 'session::ensure', { session_id: blocked, title: 'blocked' })
    const first = await rpc(a.url, 'session::append', {
      session_id: blocked,
      message: user('held in the journal'),
    })
    await rpc(a.url, 'session::append', { session_id: other, message: user('other one') })
    await rpc(a.url, 'session::append', { session_id: other, message: user('other two') })
    expect(
      (await rpc(a.url, 'session::messages', { session_id: blocked })).messages.map(
        (m: { entry_id: string }) => m.entry_id,
      ),
    ).toStrictEqual([first.entry_id])
    expect(await readFile(join(dir, sessionFileName(other)), 'utf8')).toContain('other two')
    expect(a.output()).toMatch(/cannot be written/)
    await a.stop('SIGKILL')

    // Restarted with the obstacle still there: it starts, serves both, and nothing is lost.
    const b = await serve(dir)
    expect((await rpc(b.url, 'session::get', { session_id: blocked })).meta.title).toBe('blocked')
    await rpc(b.url, 'session::append', { session_id: blocked, message: user('after restart') })
    await rpc(b.url, 'session::append', { session_id: other, message: user('other three') })
    const changes = JSON.stringify((await pullAll(b.url)).changes)
    expect(changes).toContain('after restart')
    expect(changes).not.toContain('"type":"delete"')
    await b.stop()

    await rmdir(path)
    const c = await serve(dir)
    expect(
      (await rpc(c.url, 'session::messages', { session_id: blocked })).messages.map(
        (m: { message: { content: Array<{ text: string }> } }) => m.message.content[0].text,
      ),
    ).toStrictEqual(['held in the journal', 'after restart'])
    const client = await pulled(c.url)
    await c.stop()
    expect(await readFile(path, 'utf8')).toContain('after restart')
    const disk = await snapshot(await onDisk(dir))
    expect(disk[blocked].entries).toHaveLength(2)
    expect(disk[other].entries).toHaveLength(3)
    expect(comparable(await snapshot(client))).toStrictEqual(comparable(disk))
  })

  it('a session file that turns unreadable while the server runs: writes to it wait, others go on, and it catches up while running once fixed', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const stuck = (await rpc(a.url, 'session::create', { title: 'stuck' })).session_id
    const other = (await rpc(a.url, 'session::create', { title: 'other' })).session_id
    await rpc(a.url, 'session::append', { session_id: stuck, message: user('before') })
    await a.stop()
    // A fresh process holds no open handle on the file: its first write opens it.
    const s = await serve(dir)
    expect((await rpc(s.url, 'session::messages', { session_id: stuck })).messages).toHaveLength(1)
    const path = join(dir, sessionFileName(stuck))
    // A symlink loop in its place: opening it fails (ELOOP) even for root.
    await rename(path, `${path}.away`)
    await symlink(sessionFileName(stuck), path)
    const during = await rpc(s.url, 'session::append', { session_id: stuck, message: user('during') })
    for (let i = 0; i < 5; i++)
      await rpc(s.url, 'session::append', { session_id: other, message: user(`other ${i}`) })
    expect((await rpc(s.url, 'session::messages', { session_id: other })).messages).toHaveLength(5)
    // The log comes over stderr, not in order with the answers.
    await expect.poll(() => s.output()).toMatch(/cannot be written/)
    expect(
      await rpc(s.url, 'session::get-message', { session_id: stuck, entry_id: during.entry_id }),
    ).toMatchObject({ entry: { id: during.entry_id } })
    await unlink(path)
    await rename(`${path}.away`, path)
    // The next commit of that session writes what waited, in order.
    await rpc(s.url, 'session::append', { session_id: stuck, message: user('after') })
    await expect.poll(() => s.output()).toMatch(/caught up with the journal/)
    await s.stop()
    const text = await readFile(path, 'utf8')
    expect(text.indexOf('before')).toBeLessThan(text.indexOf('during'))
    expect(text.indexOf('during')).toBeLessThan(text.indexOf('after'))
    const store = await onDisk(dir)
    expect(
      (await store.messages({ session_id: stuck })).messages.map((m) => m.message!.content[0]),
    ).toStrictEqual(['before', 'during', 'after'].map((t) => ({ type: 'text', text: t })))
  })

  it('one bad journal line or unreadable session file never stops a restart', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const keep = (await rpc(a.url, 'session::create', { title: 'keep' })).session_id
    await rpc(a.url, 'session::append', { session_id: keep, message: user('kept') })
    await a.stop('SIGKILL')
    const journal = join(dir, '.colloquy', 'journal.jsonl')
    await appendFile(
      journal,
      [
        JSON.stringify({ tx: 50, side: [{ nope: 1 }], v: 2 }),
        JSON.stringify({ tx: 51, side: [], v: 2, writes: [[7, 'x'], ['ok', 5], 'junk'], deleted: [null] }),
        '{"tx": "not a number"}',
        // Damaged change-log records and head: left out, the log still answers.
        JSON.stringify({
          tx: 52,
          side: [
            { store: 'changes', key: 'zz', value: 5 },
            { store: 'changes', key: 'yy', value: { seq: 'x', kind: 'added' } },
            { store: 'changelog', key: 'head', value: 'NaN' },
          ],
          v: 2,
        }),
      ].join('\n') + '\n',
    )
    await symlink(
      'loop+0000000000000000000000000000000000000000000000000000000000000000.jsonl',
      join(dir, 'loop+0000000000000000000000000000000000000000000000000000000000000000.jsonl'),
    )
    const b = await serve(dir)
    expect((await rpc(b.url, 'session::messages', { session_id: keep })).messages).toHaveLength(1)
    await rpc(b.url, 'session::append', { session_id: keep, message: user('still writing') })
    expect(b.output()).toMatch(/malformed/)
    expect(b.output()).toMatch(/cannot be read/)
    expect(b.output()).toMatch(/skipped 2 malformed change record/)
    const page = await pullAll(b.url)
    expect(Number.isSafeInteger(page.checkpoint)).toBe(true)
    expect(JSON.stringify(page.changes)).toContain('still writing')
  })
})
