import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { createStore, memoryStorage, SessionError, type Store } from '@colloquy/core'
import { Keyring } from '@colloquy/core/crypto'
import { hostOf } from '@colloquy/core/host'
import {
  createSync,
  fetchKeyring,
  httpTransport,
  openOrCreateKeyring,
  type IntegrityFailure,
  type Sync,
  type Transport,
} from '../../packages/sync/src/index.js'
import { WebSocket } from '../../packages/server/test/ws.js'
import {
  cleanupAfterEach,
  currentDataBackend,
  failure,
  holdsMarker,
  postJson,
  startServer,
  type ServerProcess,
} from './helpers.js'

// End-to-end encrypted sync through a real server process (its file storage here, PostgreSQL
// through test/postgres/e2e-sync.test.ts): devices that share a passphrase converge, the second
// bootstrapping its keyring from the server; the server's data holds no byte of what was written;
// a server that tampers with, swaps or replays sealed values is caught, the change refused on
// `integrity$` and the rest applied; features that need plaintext refuse sealed sessions.
const { defer } = cleanupAfterEach('e2e-sync')
const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

const PASSPHRASE = 'correct horse battery staple'
const WS = WebSocket as unknown as typeof globalThis.WebSocket

interface Server extends ServerProcess {
  /** Every byte the server stores: the files of its data directory, or a `pg_dump` of its database. */
  raw(): Promise<Buffer[]>
}

async function server(): Promise<Server> {
  const data = await currentDataBackend().data()
  defer(() => data.remove())
  const s = await startServer([...data.args, '--no-fsync', '--token', 'alice=tok-a', '--token', 'bob=tok-b'])
  defer(() => s.stop())
  return Object.assign(s, { raw: () => data.raw() })
}

interface Device {
  store: Store
  sync: Sync
  refused: IntegrityFailure[]
}

async function device(
  url: string,
  keyring: Keyring | undefined,
  token = 'tok-a',
  wrap?: (t: Transport) => Transport,
): Promise<Device> {
  const store = await createStore({ storage: memoryStorage(), multiTab: false })
  const options = { url, token, WebSocket: WS }
  const sync = createSync(store, {
    ...options,
    keyring,
    ...(wrap && { transport: wrap(httpTransport(options)) }),
  })
  const refused: IntegrityFailure[] = []
  const sub = sync.integrity$.subscribe((f) => refused.push(f))
  cleanup.push(
    () => store.close(),
    () => sync.close(),
    () => sub.unsubscribe(),
  )
  sync.start()
  return { store, sync, refused }
}

/** Every session of a replica: meta (but updated_at), leaf, entries, attachments. */
async function state(store: Store): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const meta of (await store.list({ limit: 500 })).sessions) {
    await store.engine.ensureLoaded(meta.session_id)
    const s = store.engine.state.sessions.get(meta.session_id)!
    const { updated_at: _u, ...rest } = meta
    out[meta.session_id] = {
      meta: rest,
      leaf: s.head.leaf,
      attachments: s.head.attachments ?? [],
      entries: [...s.entries!.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
    }
  }
  return out
}

const text = (t: string, role: 'user' | 'assistant' = 'user') =>
  role === 'user'
    ? { role, content: [{ type: 'text' as const, text: t }], timestamp: 1 }
    : {
        role,
        content: [{ type: 'text' as const, text: t }],
        timestamp: 1,
        api: 'test',
        provider: 'test',
        model: 'test',
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stop_reason: 'end' as const,
      }

describe('end-to-end encrypted sync with a real server', () => {
  it('two devices with one passphrase converge, the second opening the keyring the server keeps; the server stores no byte of the marker', async () => {
    const srv = await server()
    const MARKER = 'zebra-marker-4f1c9e'
    const CONTROL = 'clear-control-8b2d71'
    const opts = { url: srv.url, token: 'tok-a' }
    expect(await fetchKeyring(opts)).toBeNull()
    const ringA = await openOrCreateKeyring(opts, { passphrase: PASSPHRASE })
    const a = await device(srv.url, ringA)

    const { session_id } = await a.store.create({
      title: `${MARKER} title`,
      description: `${MARKER} description`,
      metadata: { topic: MARKER },
    })
    const file = await a.store.putAttachment({
      session_id,
      file: new File([`${MARKER} attachment bytes`], `${MARKER}.txt`, { type: 'text/plain' }),
    })
    const first = await a.store.append({
      session_id,
      message: {
        role: 'user',
        content: [{ type: 'text', text: `${MARKER} message` }, file.block],
        timestamp: 1,
      },
    })
    await a.store.append({
      session_id,
      message: text(`${MARKER} reply`, 'assistant'),
      parent_id: first.entry_id,
    })
    await a.store.setDraft({
      session_id,
      draft: `${MARKER} draft`,
      attachment_ids: [file.attachment.attachment_id],
    })
    await a.sync.flush()

    // The second device: the keyring from the server, opened with the passphrase only.
    await expect(Keyring.open(await fetchKeyring(opts), { passphrase: 'wrong' })).rejects.toMatchObject({
      code: 'session/wrong_passphrase',
    })
    const ringB = await openOrCreateKeyring(opts, { passphrase: PASSPHRASE })
    expect(ringB.currentKeyId).toBe(ringA.currentKeyId)
    const b = await device(srv.url, ringB)
    await b.sync.flush()
    expect(await state(b.store)).toEqual(await state(a.store))
    expect((await b.store.get({ session_id }))!.meta.title).toBe(`${MARKER} title`)
    const blob = await b.store.getAttachmentBlob(session_id, file.attachment.attachment_id)
    expect(await blob!.text()).toBe(`${MARKER} attachment bytes`)

    // Edits both ways keep converging (a rename on B, a reply on A, streamed).
    await b.store.setMeta({ session_id, title: `${MARKER} renamed` })
    await a.store.append({ session_id, message: text(`${MARKER} more`), parent_id: first.entry_id })
    await a.sync.flush()
    await b.sync.flush()
    await a.sync.flush()
    expect(await state(a.store)).toEqual(await state(b.store))
    expect((await a.store.get({ session_id }))!.meta.title).toBe(`${MARKER} renamed`)
    expect([...a.refused, ...b.refused]).toEqual([])

    // A clear session of another user, synced the same way: the scan below finds its marker,
    // so the scan can see what a server stores in clear.
    const clear = await device(srv.url, undefined, 'tok-b')
    const c = await clear.store.create({ title: 'clear' })
    await clear.store.append({ session_id: c.session_id, message: text(`${CONTROL} message`) })
    await clear.sync.flush()

    const raw = await srv.raw()
    expect(holdsMarker(raw, CONTROL)).toBe(true)
    expect(holdsMarker(raw, 'zebra-marker')).toBe(false)
  })

  it('an encrypted store syncs sealed with its own keys (no keyring option): the server stores no byte of the marker', async () => {
    const srv = await server()
    const MARKER = 'okapi-marker-2d7a51'
    const store = await createStore({
      storage: memoryStorage(),
      multiTab: false,
      encryption: { passphrase: PASSPHRASE },
    })
    cleanup.push(() => store.close())
    const options = { url: srv.url, token: 'tok-a', WebSocket: WS }
    const sync = createSync(store, options)
    cleanup.push(() => sync.close())
    sync.start()
    const { session_id } = await store.create({ title: `${MARKER} title` })
    await store.append({ session_id, message: text(`${MARKER} message`) })
    await sync.flush()
    expect(holdsMarker(await srv.raw(), 'okapi-marker')).toBe(false)

    // Another device holding the same keys reads it all.
    const b = await device(srv.url, hostOf(store).keyring!)
    await b.sync.flush()
    expect((await b.store.get({ session_id }))!.meta.title).toBe(`${MARKER} title`)
    expect(await state(b.store)).toEqual(await state(store))
    expect(b.refused).toEqual([])
  })

  it('a server that flips a byte, swaps values between entries or fields, or replays an older revision is caught: those changes are refused on integrity$, the rest applies, syncing goes on', async () => {
    const srv = await server()
    const ring = await Keyring.create({ passphrase: PASSPHRASE })
    // What A pushed, as the server got it (sealed): the older boxes a hostile server could replay.
    const pushed: any[] = []
    const a = await device(srv.url, ring, 'tok-a', (t) => ({
      ...t,
      push: (req) => {
        pushed.push(...req.mutations.map((m) => structuredClone(m.change)))
        return t.push(req)
      },
    }))
    const s1 = await a.store.create({ title: 'kept' })
    const root = await a.store.append({ session_id: s1.session_id, message: text('root') })
    const ids: Record<string, string> = {}
    for (const name of ['flipped', 'swapped', 'replayed', 'untouched'])
      ids[name] = (
        await a.store.append({
          session_id: s1.session_id,
          message: text(name, 'assistant'),
          parent_id: root.entry_id,
        })
      ).entry_id
    await a.sync.flush()
    await a.store.updateMessage({
      session_id: s1.session_id,
      entry_id: ids.replayed,
      content: [{ type: 'text', text: 'replayed v2' }],
    })
    const s2 = await a.store.create({ title: 'title two', description: 'description two' })
    await a.sync.flush()
    const oldBox = pushed.find(
      (c) => c.type === 'entry' && c.entry.id === ids.replayed && c.entry.revision === 0,
    ).entry.box as string
    const untouchedBox = pushed.find((c) => c.type === 'entry' && c.entry.id === ids.untouched).entry
      .box as string

    // The hostile server, between the real one and device C: alters what C pulls.
    const tamper = (change: any): any => {
      if (change.type === 'entry' && change.entry.id === ids.flipped) {
        const box = change.entry.box as string
        const at = box.length - 10
        return {
          ...change,
          entry: {
            ...change.entry,
            box: box.slice(0, at) + (box[at] === 'A' ? 'B' : 'A') + box.slice(at + 1),
          },
        }
      }
      if (change.type === 'entry' && change.entry.id === ids.swapped)
        return { ...change, entry: { ...change.entry, box: untouchedBox } }
      if (change.type === 'entry' && change.entry.id === ids.replayed)
        return { ...change, entry: { ...change.entry, box: oldBox } }
      if (change.type === 'meta' && change.meta.session_id === s2.session_id)
        return { ...change, meta: { ...change.meta, title: change.meta.description } }
      return change
    }
    const hostile = (t: Transport): Transport => ({
      ...t,
      pull: async (since, limit, epoch) => {
        const page = await t.pull(since, limit, epoch)
        return { ...page, changes: page.changes.map((c) => ({ ...c, change: tamper(c.change) })) }
      },
      stream: (since, onMessage, onClose, epoch) =>
        t.stream(
          since,
          (m: any) =>
            onMessage(
              m.changes
                ? { ...m, changes: m.changes.map((c: any) => ({ ...c, change: tamper(c.change) })) }
                : m,
            ),
          onClose,
          epoch,
        ),
    })
    const c = await device(srv.url, ring, 'tok-a', hostile)
    await c.sync.flush()

    // Once per log position that carries one (an updated entry may sit at two).
    const refusedIds = [...new Set(c.refused.map((f) => f.id ?? f.session_id))].sort()
    expect(refusedIds).toEqual([ids.flipped, ids.swapped, ids.replayed, s2.session_id].sort())
    for (const f of c.refused) {
      expect(f.code).toBe('session/integrity')
      expect(typeof f.seq).toBe('number')
    }
    // Nothing of a refused change applied; everything else did.
    const held = await c.store.messages({ session_id: s1.session_id, include_custom: true, limit: 100 })
    expect(held).toBeDefined()
    await c.store.engine.ensureLoaded(s1.session_id)
    const entries = [...c.store.engine.state.sessions.get(s1.session_id)!.entries!.keys()].sort()
    expect(entries).toEqual([root.entry_id, ids.untouched].sort())
    expect((await c.store.get({ session_id: s1.session_id }))!.meta.title).toBe('kept')
    expect(await c.store.get({ session_id: s2.session_id })).toBeNull()

    // Syncing goes on: a new reply on A reaches C.
    const later = await a.store.append({
      session_id: s1.session_id,
      message: text('after'),
      parent_id: ids.untouched,
    })
    await a.sync.flush()
    await c.sync.flush()
    expect(
      (await c.store.getMessage({ session_id: s1.session_id, entry_id: later.entry_id }))?.entry,
    ).toBeDefined()
    expect(new Set(c.refused.map((f) => f.id ?? f.session_id)).size).toBe(4)
  })

  it('a flipped byte in what the server stores (its files, or its database) is caught when a device pulls it', async () => {
    const data = await currentDataBackend().data()
    defer(() => data.remove())
    const args = [...data.args, '--no-fsync', '--token', 'alice=tok-a']
    const first = await startServer(args)
    const ring = await Keyring.create({ passphrase: PASSPHRASE })
    const pushed: any[] = []
    const a = await device(first.url, ring, 'tok-a', (t) => ({
      ...t,
      push: (req) => {
        pushed.push(...req.mutations.map((m) => structuredClone(m.change)))
        return t.push(req)
      },
    }))
    const { session_id } = await a.store.create({ title: 'on disk' })
    const root = await a.store.append({ session_id, message: text('root') })
    const altered = await a.store.append({
      session_id,
      message: text('altered', 'assistant'),
      parent_id: root.entry_id,
    })
    const intact = await a.store.append({
      session_id,
      message: text('intact', 'assistant'),
      parent_id: root.entry_id,
    })
    await a.sync.flush()
    a.sync.stop()
    await first.stop()

    // One character of the entry's box changed where it is stored, as a disk or an operator could.
    const box = pushed.find((c) => c.type === 'entry' && c.entry.id === altered.entry_id).entry.box as string
    const at = Math.floor(box.length / 2)
    const flipped = box.slice(0, at) + (box[at] === 'A' ? 'B' : 'A') + box.slice(at + 1)
    let edits = 0
    if (data.args.includes('--postgres')) {
      const db = new pg.Client({ connectionString: data.args[data.args.indexOf('--postgres') + 1] })
      await db.connect()
      try {
        const r = await db.query(
          'UPDATE colloquy_entries SET entry = replace(entry::text, $1, $2)::json WHERE strpos(entry::text, $1) > 0',
          [box, flipped],
        )
        edits = r.rowCount ?? 0
      } finally {
        await db.end()
      }
    } else {
      const dir = data.args[data.args.indexOf('--data-dir') + 1]
      const walk = async (d: string): Promise<void> => {
        for (const e of await readdir(d, { withFileTypes: true })) {
          const path = join(d, e.name)
          if (e.isDirectory()) await walk(path)
          else if (e.isFile()) {
            const content = await readFile(path, 'utf8')
            if (!content.includes(box)) continue
            await writeFile(path, content.split(box).join(flipped))
            edits++
          }
        }
      }
      await walk(dir)
    }
    expect(edits).toBeGreaterThan(0)

    const second = await startServer(args)
    defer(() => second.stop())
    const c = await device(second.url, ring)
    await c.sync.flush()
    expect([...new Set(c.refused.map((f) => f.id))]).toEqual([altered.entry_id])
    await c.store.engine.ensureLoaded(session_id)
    expect([...c.store.engine.state.sessions.get(session_id)!.entries!.keys()].sort()).toEqual(
      [root.entry_id, intact.entry_id].sort(),
    )
  })

  it('a device that restarted (no sealed meta held yet) edits a field: its own echo and later edits open without a false alarm', async () => {
    const srv = await server()
    const ring = await Keyring.create({ passphrase: PASSPHRASE })
    const a = await device(srv.url, ring)
    const { session_id } = await a.store.create({ title: 'before' })
    await a.sync.flush()
    a.sync.close()
    // The same store, a new sync (what a reload gives): it holds no sealed form of the meta.
    const again = createSync(a.store, { url: srv.url, token: 'tok-a', WebSocket: WS, keyring: ring })
    const refused: IntegrityFailure[] = []
    const sub = again.integrity$.subscribe((f) => refused.push(f))
    cleanup.push(
      () => again.close(),
      () => sub.unsubscribe(),
    )
    await a.store.setStatus({ session_id, status: 'done' })
    again.start()
    await again.flush()
    const b = await device(srv.url, ring)
    await b.sync.flush()
    await b.store.setMeta({ session_id, title: 'after' })
    await b.sync.flush()
    await again.flush()
    expect(refused).toEqual([])
    expect((await a.store.get({ session_id }))!.meta).toMatchObject({ title: 'after', status: 'done' })
    expect((await b.store.get({ session_id }))!.meta).toMatchObject({ title: 'after', status: 'done' })
  })

  it('a device that reloads keeps its sealed meta counters: an older meta a proxy replays after the reload is refused on integrity$, nothing of it applied, syncing goes on', async () => {
    const srv = await server()
    const ring = await Keyring.create({ passphrase: PASSPHRASE })
    const a = await device(srv.url, ring)
    const { session_id } = await a.store.create({ title: 'first' })
    await a.sync.flush()

    // B's proxy: keeps every sealed meta of the session it passes, and once armed, puts the
    // oldest in place of the next one (a replay at a position past everything B has seen).
    const seen: any[] = []
    let armed = false
    const swap = (c: any): any => {
      if (c.type !== 'meta' || c.meta.session_id !== session_id) return c
      seen.push(structuredClone(c.meta))
      if (!armed) return c
      armed = false
      return { ...c, meta: seen[0] }
    }
    const proxy = (t: Transport): Transport => ({
      ...t,
      pull: async (since, limit, epoch) => {
        const page = await t.pull(since, limit, epoch)
        return { ...page, changes: page.changes.map((c) => ({ ...c, change: swap(c.change) })) }
      },
      stream: (since, onMessage, onClose, epoch) =>
        t.stream(
          since,
          (m: any) =>
            onMessage(
              m.changes
                ? { ...m, changes: m.changes.map((c: any) => ({ ...c, change: swap(c.change) })) }
                : m,
            ),
          onClose,
          epoch,
        ),
    })
    const options = { url: srv.url, token: 'tok-a', WebSocket: WS }
    const storage = memoryStorage()
    const open = async (): Promise<Device> => {
      const store = await createStore({ storage, multiTab: false })
      const sync = createSync(store, { ...options, keyring: ring, transport: proxy(httpTransport(options)) })
      const refused: IntegrityFailure[] = []
      const sub = sync.integrity$.subscribe((f) => refused.push(f))
      cleanup.push(
        () => store.close(),
        () => sync.close(),
        () => sub.unsubscribe(),
      )
      sync.start()
      return { store, sync, refused }
    }
    const b = await open()
    await b.sync.flush()
    await a.store.setMeta({ session_id, title: 'second' })
    await a.sync.flush()
    await b.sync.flush()
    expect((await b.store.get({ session_id }))!.meta.title).toBe('second')

    // The reload: a new store and sync over the same database. What it kept of the meta is
    // counters and a log position, no box.
    b.sync.close()
    await b.store.close()
    const stored = (await storage.sideRecords!('kv')).find((r) => r.key === `sync:sealed-meta:${session_id}`)
    expect(stored?.value).toEqual({
      revs: expect.objectContaining({ title: expect.any(Number) }),
      seq: expect.any(Number),
    })
    expect(JSON.stringify(stored)).not.toContain('box')
    const again = await open()
    await again.sync.flush()

    // A's next edit reaches B as the first meta, replayed: refused, nothing of it applied.
    armed = true
    await a.store.setMeta({ session_id, description: 'edited' })
    await a.sync.flush()
    await again.sync.flush()
    expect(armed).toBe(false)
    expect(again.refused).toHaveLength(1)
    expect(again.refused[0]).toMatchObject({ session_id, change: 'meta', code: 'session/integrity' })
    expect((await again.store.get({ session_id }))!.meta).toMatchObject({ title: 'second', description: '' })

    // Syncing goes on: A's next edit (its whole meta) reaches B.
    await a.store.setMeta({ session_id, title: 'third' })
    await a.sync.flush()
    await again.sync.flush()
    expect((await again.store.get({ session_id }))!.meta).toMatchObject({
      title: 'third',
      description: 'edited',
    })
    expect(again.refused).toHaveLength(1)
  })

  it('features that need plaintext answer a sealed session with a clear 4xx; clear sessions are served as before', async () => {
    const srv = await server()
    const ring = await Keyring.create({ passphrase: PASSPHRASE })
    const a = await device(srv.url, ring)
    const sealed = await a.store.create({ title: 'sealed findme' })
    await a.store.append({ session_id: sealed.session_id, message: text('hidden') })
    await a.sync.flush()
    const clear = await device(srv.url, undefined)
    const open = await clear.store.create({ title: 'clear findme' })
    await clear.store.append({ session_id: open.session_id, message: text('visible') })
    await clear.sync.flush()
    const auth = { authorization: 'Bearer tok-a' }

    const history = await fetch(`${srv.url}/sessions/${sealed.session_id}/history`, { headers: auth })
    expect(history.status).toBe(400)
    const body = (await history.json()) as { error: { code: string; message: string } }
    expect(body.error.code).toBe('session/invalid_request')
    expect(body.error.message).toMatch(/end-to-end encrypted/)
    expect((await fetch(`${srv.url}/sessions/${open.session_id}/history`, { headers: auth })).status).toBe(
      200,
    )

    for (const [fn, req] of [
      ['session::messages', { session_id: sealed.session_id }],
      ['session::get-message', { session_id: sealed.session_id, entry_id: 'x' }],
      [
        'session::append',
        { session_id: sealed.session_id, message: text('clear text into a sealed session') },
      ],
      ['session::fork', { session_id: sealed.session_id, entry_id: 'x' }],
      ['session::mention::search', { query: 'findme', context: { session_id: sealed.session_id } }],
      ['session::mention::get', { id: sealed.session_id }],
    ] as const) {
      const res = await postJson(`${srv.url}/rpc/${fn}`, req, 'tok-a')
      expect(res.status, fn).toBe(400)
      expect((await failure(res)).message, fn).toMatch(/end-to-end encrypted/)
    }
    // Full-text search: a search named to the sealed session is refused as above; one over every
    // session finds the clear session's words and nothing of the sealed one's.
    const named = await postJson(
      `${srv.url}/rpc/session::search`,
      { query: 'hidden', session_ids: [sealed.session_id] },
      'tok-a',
    )
    expect(named.status).toBe(400)
    expect((await failure(named)).message).toMatch(/end-to-end encrypted/)
    const searched = async (query: string, token = 'tok-a'): Promise<string[]> => {
      const r = await postJson(`${srv.url}/rpc/session::search`, { query }, token)
      expect(r.status).toBe(200)
      return ((await r.json()) as { hits: Array<{ session_id: string }> }).hits.map((h) => h.session_id)
    }
    expect(await searched('visible')).toEqual([open.session_id])
    expect(await searched('findme')).toEqual([open.session_id])
    // Another principal naming it learns nothing of it: no refusal, no hit.
    const other = await postJson(
      `${srv.url}/rpc/session::search`,
      { query: 'hidden', session_ids: [sealed.session_id] },
      'tok-b',
    )
    expect(other.status).toBe(200)
    expect(((await other.json()) as { hits: unknown[] }).hits).toEqual([])
    // A mention search over every session offers the clear one and skips the sealed one.
    const res = await postJson(`${srv.url}/rpc/session::mention::search`, { query: 'findme' }, 'tok-a')
    expect(res.status).toBe(200)
    const items = ((await res.json()) as { items: Array<{ id: string }> }).items.map((i) => i.id)
    expect(items).toContain(open.session_id)
    expect(items).not.toContain(sealed.session_id)
  })

  it('GET/PUT /keyring: per principal, checked, bounded, never replaced by one lacking a held key', async () => {
    const srv = await server()
    const put = (body: unknown, token = 'tok-a') =>
      fetch(`${srv.url}/keyring`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      })
    const ring = await Keyring.create({ passphrase: PASSPHRASE })
    expect((await put({ format: 'colloquy-keyring', version: 1, kdf: null, keys: [] })).status).toBe(400)
    expect((await put(JSON.stringify('x'.repeat(70 * 1024)))).status).toBe(413)
    expect((await put(ring.serialize())).status).toBe(200)
    expect(await fetchKeyring({ url: srv.url, token: 'tok-a' })).toEqual(ring.serialize())
    // Bob keeps his own, and sees none of Alice's.
    expect(await fetchKeyring({ url: srv.url, token: 'tok-b' })).toBeNull()
    // A fresh keyring would orphan what the held one sealed: refused. A rotation adds a key: taken.
    const other = await Keyring.create({ passphrase: PASSPHRASE })
    expect((await put(other.serialize())).status).toBe(409)
    await ring.rotate()
    expect((await put(ring.serialize())).status).toBe(200)
    expect((await fetchKeyring({ url: srv.url, token: 'tok-a' }))!.keys).toHaveLength(2)
    expect((await fetch(`${srv.url}/keyring`)).status).toBe(401)
    // A keyring from the server opens with the passphrase; a wrong one opens nothing.
    await expect(
      Keyring.open(await fetchKeyring({ url: srv.url, token: 'tok-a' }), { passphrase: 'nope' }),
    ).rejects.toBeInstanceOf(SessionError)
  })
})
