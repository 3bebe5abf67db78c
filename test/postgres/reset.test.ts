import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, type Store } from '@colloquy/core'
import { createSync, type Sync } from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import {
  pull,
  pullAll,
  rpc,
  startServer,
  tempDir,
  testSocket,
  user,
  type ServerProcess,
} from '../server/helpers.js'
import { startPostgres, type TestCluster } from '../support/postgres.js'

// Cursors the server cannot serve (too old, another epoch, ahead of it) get an explicit reset,
// and the sync client recovers with a full resync that loses nothing.
let cluster: TestCluster
beforeAll(async () => {
  cluster = await startPostgres()
})
afterAll(() => cluster?.stop())

const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})
const serve = async (args: string[]): Promise<ServerProcess> => {
  const s = await startServer(args)
  cleanup.push(() => s.stop())
  return s
}
const dbName = (url: string): string => url.slice(url.lastIndexOf('/') + 1)

/** A device whose server can be swapped (a load balancer pointing elsewhere). */
async function device(): Promise<{ store: Store; sync: Sync; point(url: string): void }> {
  let target = ''
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const sync = createSync(store, {
    url: 'http://device.invalid',
    fetch: (input, init) => fetch(String(input).replace('http://device.invalid', target), init),
    WebSocket: class extends WebSocket {
      constructor(url: string) {
        super(url.replace('ws://device.invalid', target.replace('http', 'ws')))
      }
    } as unknown as typeof globalThis.WebSocket,
  })
  cleanup.push(
    () => store.close(),
    () => sync.close(),
  )
  return { store, sync, point: (url) => void (target = url) }
}

/** Every session, comparable: title, leaf and the texts of all its entries (every branch), sorted. */
type State = Record<string, { title: string; leaf: string | null; texts: string[] }>
async function serverState(url: string): Promise<State> {
  const out: State = {}
  const entries = new Map<string, Map<string, string>>()
  for (const { change: c } of (await pullAll(url)).changes as any[]) {
    if (c.type === 'meta')
      out[c.meta.session_id] = { title: c.meta.title, leaf: out[c.meta.session_id]?.leaf ?? null, texts: [] }
    else if (c.type === 'leaf') out[c.session_id].leaf = c.entry_id
    else if (c.type === 'entry') {
      if (!entries.has(c.session_id)) entries.set(c.session_id, new Map())
      entries.get(c.session_id)!.set(c.entry.id, c.entry.message.content[0].text)
    } else if (c.type === 'delete') delete out[c.session_id]
  }
  for (const [id, s] of Object.entries(out)) s.texts = [...(entries.get(id)?.values() ?? [])].sort()
  return out
}
async function deviceState(store: Store): Promise<State> {
  await store.flush()
  const out: State = {}
  for (const [id, s] of store.engine.state.sessions) {
    await store.engine.ensureLoaded(id)
    const held = store.engine.state.sessions.get(id)!
    out[id] = {
      title: s.head.meta.title,
      leaf: held.head.leaf,
      texts: [...held.entries!.values()].map((e: any) => e.message.content[0].text).sort(),
    }
  }
  return out
}

describe('reset answers', () => {
  it('pull and stream answer a cursor ahead of the log, from another epoch, or below the oldest kept one with a reset', async () => {
    const db = await cluster.createDatabase()
    const s = await serve(['--postgres', db])
    const { session_id } = await rpc(s.url, 'session::create', { title: 'one' })
    await rpc(s.url, 'session::append', { session_id, message: user('hello') })
    const first = await pull(s.url, 0)
    const epoch = (first as any).epoch as string
    expect(epoch).toMatch(/\S/)
    expect((first as any).reset).toBeUndefined()
    const get = async (q: string) => (await fetch(`${s.url}/sync/pull?${q}`)).json() as Promise<any>
    expect(await get(`since=${first.head}&epoch=${encodeURIComponent(epoch)}`)).toMatchObject({
      changes: [],
      checkpoint: first.head,
      more: false,
    })
    for (const q of [`since=${first.head + 5}`, `since=1&epoch=someone-else`, `since=0&epoch=someone-else`]) {
      expect(await get(q)).toStrictEqual({
        changes: [],
        checkpoint: 0,
        head: first.head,
        more: true,
        epoch,
        reset: true,
      })
    }
    await cluster.query('UPDATE colloquy_clock SET floor = $1', [first.head], dbName(db))
    expect(await get(`since=1&epoch=${encodeURIComponent(epoch)}`)).toMatchObject({
      reset: true,
      checkpoint: 0,
    })
    // Since 0 is always served: the log keeps every live record.
    expect((await get('since=0')).changes.length).toBe(first.changes.length)

    const ws = await testSocket(`${s.url.replace('http', 'ws')}/sync/stream?since=1&epoch=other`)
    const ready = await ws.next((m) => m.type === 'ready')
    expect(ws.messages[0]).toStrictEqual({ type: 'reset', checkpoint: 0, head: first.head, epoch })
    expect(ws.messages.filter((m) => m.type === 'changes').flatMap((m) => m.changes)).toStrictEqual(
      first.changes,
    )
    expect(ready).toMatchObject({ checkpoint: first.head, epoch })
    ws.close()
    expect((await fetch(`${s.url}/sync/pull?since=0&epoch=${'x'.repeat(101)}`)).status).toBe(400)
  })

  it('a database restored from a backup (another epoch): the device resyncs, pushing back what the backup lacks, and converges', async () => {
    const db = await cluster.createDatabase()
    let s = await serve(['--postgres', db])
    const d = await device()
    d.point(s.url)
    d.sync.start()
    const kept = await d.store.create({ title: 'in the backup' })
    await d.store.append({ session_id: kept.session_id, message: user('old') })
    await d.sync.flush()
    await s.stop()
    const backup = `${dbName(db)}_backup`
    await cluster.query(`CREATE DATABASE ${backup} TEMPLATE ${dbName(db)}`)
    s = await serve(['--postgres', db])
    d.point(s.url)
    const lost = await d.store.create({ title: 'after the backup' })
    await d.store.append({
      session_id: lost.session_id,
      message: user('acknowledged, then lost by the restore'),
    })
    await d.store.append({ session_id: kept.session_id, message: user('newer entry in an old session') })
    await d.sync.flush()
    await s.stop()
    // Restore: the server now runs on the backup, which knows nothing of the later commits.
    const restored = await serve(['--postgres', db.replace(/[^/]+$/, backup)])
    d.point(restored.url)
    const offline = await d.store.create({ title: 'made while the server was away' })
    await d.store.append({ session_id: offline.session_id, message: user('pending') })
    d.sync.stop()
    d.sync.start()
    await d.sync.flush()
    await d.sync.flush()
    const server = await serverState(restored.url)
    expect(Object.keys(server).sort()).toEqual([kept.session_id, lost.session_id, offline.session_id].sort())
    expect(server[kept.session_id].texts).toEqual(['newer entry in an old session', 'old'])
    // The leaf the backup lost is restored too.
    expect(server[kept.session_id].leaf).toBe(d.store.engine.state.sessions.get(kept.session_id)!.head.leaf)
    expect(
      (await rpc(restored.url, 'session::messages', { session_id: kept.session_id })).messages.map(
        (m: any) => m.message.content[0].text,
      ),
    ).toEqual(['old', 'newer entry in an old session'])
    expect(server[lost.session_id].texts).toEqual(['acknowledged, then lost by the restore'])
    expect(await deviceState(d.store)).toStrictEqual(server)
  })

  it('a cursor below the oldest one kept: the device resyncs and converges, its pending change included', async () => {
    const db = await cluster.createDatabase()
    const s = await serve(['--postgres', db])
    const d = await device()
    d.point(s.url)
    d.sync.start()
    const a = await d.store.create({ title: 'a' })
    await d.sync.flush()
    d.sync.stop()
    await rpc(s.url, 'session::append', { session_id: a.session_id, message: user('from elsewhere') })
    await cluster.query('UPDATE colloquy_clock SET floor = head', [], dbName(db))
    await d.store.append({ session_id: a.session_id, message: user('local, pending') })
    d.sync.start()
    await d.sync.flush()
    await d.sync.flush()
    const server = await serverState(s.url)
    expect(server[a.session_id].texts).toEqual(['from elsewhere', 'local, pending'])
    expect(await deviceState(d.store)).toStrictEqual(server)
  })

  it('on the file storage, a wiped data directory (the device is ahead): reset, and the device restores what the server lost', async () => {
    const t1 = await tempDir('reset-file')
    const t2 = await tempDir('reset-file-wiped')
    cleanup.push(t1.remove, t2.remove)
    let s = await serve(['--data-dir', t1.dir])
    const d = await device()
    d.point(s.url)
    d.sync.start()
    const x = await d.store.create({ title: 'x' })
    for (let i = 0; i < 5; i++) await d.store.append({ session_id: x.session_id, message: user(`m${i}`) })
    await d.sync.flush()
    await s.stop()
    s = await serve(['--data-dir', t2.dir])
    d.point(s.url)
    const page = await (await fetch(`${s.url}/sync/pull?since=99`)).json()
    expect(page).toMatchObject({ reset: true, checkpoint: 0 })
    d.sync.stop()
    d.sync.start()
    await d.sync.flush()
    await d.sync.flush()
    const server = await serverState(s.url)
    expect(server[x.session_id].texts).toEqual(['m0', 'm1', 'm2', 'm3', 'm4'])
    expect(await deviceState(d.store)).toStrictEqual(server)
    expect((await pullAll(s.url)).changes.length).toBeGreaterThan(0)
  })
})
