import 'fake-indexeddb/auto'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { firstValueFrom, filter } from 'rxjs'
import { indexedDbStorage, type Store } from '@colloquy/core'
import {
  createSync,
  type Conflict,
  type IntegrityFailure,
  type Rejection,
  type Sync,
  type Transport,
} from '../src/index.js'
import { replicaSnapshot } from '../../../test/support/replica-snapshot.js'
import { loopback, type Loopback } from './loopback.js'
import { deviceStore, encryptedStores, opened, type Sealed } from './scenario.js'

const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 1,
})
const assistant = (text = '') => ({
  role: 'assistant' as const,
  content: text ? [{ type: 'text' as const, text }] : [],
  model: 'm',
  provider: 'p',
  stop_reason: 'end' as const,
  timestamp: 2,
})
const text = (t: string) => [{ type: 'text' as const, text: t }]

const cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

/** With encrypted stores, sync seals with each store's own keys; with clear ones, with the keyring. */
const syncKeys = (sealed: Sealed | undefined) => (sealed && !sealed.kek ? { keyring: sealed.keyring } : {})

async function device(
  server: Loopback,
  options: { transport?: Transport; store?: Store; sealed?: Sealed; eagerAttachments?: boolean } = {},
): Promise<{ store: Store; sync: Sync; refused: IntegrityFailure[] }> {
  const store = options.store ?? (await deviceStore(options.sealed))
  const sync = createSync(store, {
    url: 'http://unused',
    transport: options.transport ?? server.transport(),
    eagerAttachments: options.eagerAttachments,
    ...syncKeys(options.sealed),
  })
  const refused: IntegrityFailure[] = []
  const sub = sync.integrity$.subscribe((f) => refused.push(f))
  cleanup.push(
    () => sync.close(),
    () => store.close(),
    () => sub.unsubscribe(),
  )
  return { store, sync, refused }
}

describe('attachments replicate', () => {
  const png = (seed: number) =>
    new Blob([new Uint8Array([137, 80, 78, 71, seed, seed + 1, seed + 2])], { type: 'image/png' })
  const referenced = (m: { content: ReadonlyArray<{ type: string; attachment_id?: string }> }): string[] =>
    m.content.flatMap((b) => (b.attachment_id !== undefined ? [b.attachment_id] : []))

  it('an image pasted offline on A reaches B after reconnect, never referenced anywhere before it exists there', async () => {
    const server = await loopback()
    const a = await device(server)
    const b = await device(server)
    // Every message the server or B takes in must find its attachments already held there. The
    // subscriber only records: an `expect` thrown inside it would not reach this test.
    const unheld: string[] = []
    let checked = 0
    for (const [where, replica] of [
      ['server', server.store],
      ['B', b.store],
    ] as const) {
      replica.on('session::message-added').subscribe((e) => {
        const held = (replica.engine.state.sessions.get(e.session_id)?.head.attachments ?? []).map(
          (x) => x.attachment_id,
        )
        for (const id of e.message ? referenced(e.message) : []) {
          checked++
          if (!held.includes(id)) unheld.push(`${where}: ${e.entry_id} references ${id} before it is held`)
        }
      })
    }
    server.online = false
    a.sync.start()
    b.sync.start()
    const { session_id } = await a.store.create({ title: 'pasted offline' })
    const { attachment } = await a.store.putAttachment({ session_id, file: png(1) })
    await a.store.append({
      session_id,
      message: {
        role: 'user',
        content: [
          text('look')[0],
          { type: 'image', mime: 'image/png', data: '', attachment_id: attachment.attachment_id },
        ],
        timestamp: 1,
      },
    })
    // Offline, the put waits in the outbox with everything else.
    await expect.poll(async () => (await firstValueFrom(a.sync.status$)).pending).toBeGreaterThan(2)
    server.online = true
    await a.sync.flush()
    await b.sync.flush()
    expect(server.requests.upload).toBe(1)
    expect((await server.store.listAttachments({ session_id })).attachments).toEqual([attachment])
    // B holds the metadata at once and fetches the bytes on first read, once.
    expect((await b.store.listAttachments({ session_id })).attachments).toEqual([attachment])
    expect(server.requests.download).toBe(0)
    const got = await b.store.getAttachmentBlob(session_id, attachment.attachment_id)
    expect([...new Uint8Array(await got!.arrayBuffer())]).toEqual([137, 80, 78, 71, 1, 2, 3])
    await b.store.getAttachmentBlob(session_id, attachment.attachment_id)
    expect(server.requests.download).toBe(1)
    expect((await b.store.messages({ session_id })).messages[0].message).toEqual(
      (await a.store.messages({ session_id })).messages[0].message,
    )
    // The message with the image reached both the server and B, and neither took it in early.
    expect(checked).toBe(2)
    expect(unheld).toEqual([])
  })

  it('with eagerAttachments, flush() returns with the bytes held: they read back with the server gone', async () => {
    const server = await loopback()
    const a = await device(server)
    const b = await device(server, { eagerAttachments: true })
    a.sync.start()
    const { session_id } = await a.store.create({ title: 'for the plane' })
    const put = [await a.store.putAttachment({ session_id, file: png(7) })]
    put.push(await a.store.putAttachment({ session_id, file: png(9) }))
    await a.sync.flush()
    b.sync.start()
    await b.sync.flush()
    // Downloaded before flush() resolved, each once: no read of B's has asked for them yet.
    expect(server.requests.download).toBe(2)
    server.online = false
    for (const [i, { attachment }] of put.entries()) {
      const got = await b.store.getAttachmentBlob(session_id, attachment.attachment_id)
      expect([...new Uint8Array(await got!.arrayBuffer())]).toEqual([
        137,
        80,
        78,
        71,
        7 + 2 * i,
        8 + 2 * i,
        9 + 2 * i,
      ])
    }
    expect(server.requests.download).toBe(2)
  })

  it('fork, attachment delete and session delete replicate; an in-use attachment is refused everywhere', async () => {
    const server = await loopback()
    const a = await device(server)
    const b = await device(server)
    a.sync.start()
    b.sync.start()
    const { session_id } = await a.store.create({ title: 'source' })
    const kept = await a.store.putAttachment({ session_id, file: png(5) })
    const loose = await a.store.putAttachment({ session_id, name: 'loose.txt', data: 'aGk=' })
    const { entry_id } = await a.store.append({
      session_id,
      message: { role: 'user', content: [kept.block], timestamp: 1 },
    })
    const fork = await a.store.fork({ session_id, entry_id })
    await a.sync.flush()
    await b.sync.flush()
    expect(
      (await b.store.listAttachments({ session_id: fork.session_id })).attachments.map(
        (x) => x.attachment_id,
      ),
    ).toEqual([kept.attachment.attachment_id])
    expect(
      (await (await b.store.getAttachmentBlob(fork.session_id, kept.attachment.attachment_id))!.arrayBuffer())
        .byteLength,
    ).toBe(7)
    // Deleting the unreferenced upload on A removes it on the server and on B.
    await a.store.deleteAttachment({ session_id, attachment_id: loose.attachment.attachment_id })
    await a.sync.flush()
    await b.sync.flush()
    expect((await b.store.listAttachments({ session_id })).attachments.map((x) => x.attachment_id)).toEqual([
      kept.attachment.attachment_id,
    ])
    expect((await server.store.listAttachments({ session_id })).attachments).toHaveLength(1)
    // The source goes; the fork keeps its copy.
    await a.store.delete({ session_id })
    await a.sync.flush()
    await b.sync.flush()
    expect(await b.store.get({ session_id })).toBeNull()
    expect(
      await b.store.getAttachment({ session_id, attachment_id: kept.attachment.attachment_id }),
    ).toBeNull()
    expect(
      (await b.store.getAttachment({
        session_id: fork.session_id,
        attachment_id: kept.attachment.attachment_id,
      }))!.attachment.name,
    ).toBe('image.png')
  })
})

describe('sync with a server', () => {
  it('a draft typed on one device shows on the other, its chips with it', async () => {
    const server = await loopback()
    const a = await device(server)
    const b = await device(server)
    a.sync.start()
    b.sync.start()
    const { session_id } = await a.store.create({ title: 'draft sync' })
    await a.sync.flush()
    await b.sync.flush()
    const updatedAt = (await a.store.get({ session_id }))!.meta.updated_at
    await a.store.setDraft({ session_id, draft: 'half-typed on A' })
    await a.sync.flush()
    await b.sync.flush()
    expect((await server.store.get({ session_id }))!.meta.draft).toBe('half-typed on A')
    expect((await b.store.get({ session_id }))!.meta.draft).toBe('half-typed on A')
    // Still event-silent and updated_at-neutral on the other replicas.
    expect((await b.store.get({ session_id }))!.meta.updated_at).toBe(updatedAt)
    // Chips travel with the text, behind the attachments they name: every replica shows them.
    const { attachment } = await a.store.putAttachment({
      session_id,
      name: 'shot.png',
      mime: 'image/png',
      data: 'iVBORw0KGgo=',
    })
    await a.store.setDraft({ session_id, draft: 'with a chip', attachment_ids: [attachment.attachment_id] })
    await a.sync.flush()
    await b.sync.flush()
    const onB = (await b.store.get({ session_id }))!.meta
    expect(onB.draft).toBe('with a chip')
    expect(onB.draft_attachments?.map((c) => c.attachment_id)).toEqual([attachment.attachment_id])
    expect(onB.updated_at).toBe(updatedAt)
    expect(
      (await server.store.get({ session_id }))!.meta.draft_attachments?.map((c) => c.attachment_id),
    ).toEqual([attachment.attachment_id])
    expect((await a.store.get({ session_id }))!.meta.draft_attachments?.map((c) => c.attachment_id)).toEqual([
      attachment.attachment_id,
    ])
    // Clearing the draft on B clears text and chips on A.
    await b.store.setDraft({ session_id, draft: null, attachment_ids: [] })
    await b.sync.flush()
    await a.sync.flush()
    expect('draft_attachments' in (await a.store.get({ session_id }))!.meta).toBe(false)
    expect((await a.store.get({ session_id }))!.meta.draft).toBeUndefined()
  })

  it('offline edits reach the server in one request, consecutive updates coalesced, ids/parents/timestamps kept', async () => {
    const server = await loopback()
    const { store, sync } = await device(server)
    const { session_id } = await store.create({ title: 'offline', metadata: { owner: 'u_1' } })
    await store.append({ session_id, message: user('hi') })
    const { entry_id } = await store.append({ session_id, message: assistant() })
    let reply = ''
    for (let i = 0; i < 20; i++)
      await store.updateMessage({ session_id, entry_id, content: text((reply += `t${i} `)) })
    const serverUpdates: unknown[] = []
    server.store.on('session::message-updated').subscribe((e) => serverUpdates.push(e))
    sync.start()
    await sync.flush()
    expect(server.requests.push).toBe(1)
    // The new entry and its 20 updates arrive as one version at revision 20: no update event.
    expect(serverUpdates).toHaveLength(0)
    expect((await server.store.getMessage({ session_id, entry_id }))!.entry).toEqual(
      (await store.getMessage({ session_id, entry_id }))!.entry,
    )
    expect(await replicaSnapshot(server.store)).toEqual(await replicaSnapshot(store))
    expect(await firstValueFrom(sync.status$)).toMatchObject({ state: 'idle', pending: 0, leader: true })
  })

  it('two devices edit offline and branch from the same parent, then both converge to the server', async () => {
    const server = await loopback()
    const a = await device(server)
    const b = await device(server)
    a.sync.start()
    b.sync.start()
    const { session_id } = await a.store.create({ title: 'shared' })
    const root = await a.store.append({ session_id, message: user('question') })
    await a.sync.flush()
    await b.sync.flush()
    expect((await b.store.messages({ session_id })).messages.map((m) => m.entry_id)).toEqual([root.entry_id])

    server.online = false
    const fromA = await a.store.append({
      session_id,
      parent_id: root.entry_id,
      message: assistant('answer from A'),
    })
    const fromB = await b.store.append({
      session_id,
      parent_id: root.entry_id,
      message: assistant('answer from B'),
    })
    await b.store.setMeta({ session_id, title: 'renamed on B' })
    server.online = true
    a.sync.stop()
    a.sync.start()
    b.sync.stop()
    b.sync.start()
    await a.sync.flush()
    await b.sync.flush()
    await a.sync.flush()

    const tree = await firstValueFrom(a.store.tree$(session_id).pipe(filter((t) => t !== null)))
    expect([...tree!.children.get(root.entry_id)!].sort()).toEqual([fromA.entry_id, fromB.entry_id].sort())
    expect(await replicaSnapshot(a.store)).toEqual(await replicaSnapshot(server.store))
    expect(await replicaSnapshot(b.store)).toEqual(await replicaSnapshot(server.store))
    expect((await a.store.get({ session_id }))!.meta).toMatchObject({
      title: 'renamed on B',
      message_count: 3,
    })
  })

  it('remote changes fire the same events and live queries, and a device never hears its own changes twice', async () => {
    const server = await loopback()
    const a = await device(server)
    const b = await device(server)
    a.sync.start()
    b.sync.start()
    const { session_id } = await a.store.create({ title: 'live' })
    const { entry_id } = await a.store.append({ session_id, message: assistant() })
    await a.sync.flush()
    await b.sync.flush()
    const onB: string[] = []
    b.store.on('session::message-updated', { session_id }).subscribe((e) => onB.push(`${e.revision}`))
    const onA: unknown[] = []
    a.store.on('session::message-updated').subscribe((e) => onA.push(e))
    const live: string[] = []
    b.store.messages$({ session_id }).subscribe((items) => {
      const m = items[0]?.message
      if (m) live.push(m.content.map((c) => (c.type === 'text' ? c.text : '')).join(''))
    })
    await a.store.updateMessage({ session_id, entry_id, content: text('It is') })
    await a.sync.flush()
    await b.sync.flush()
    await a.store.updateMessage({ session_id, entry_id, content: text('It is sunny') })
    await a.sync.flush()
    await b.sync.flush()
    expect(onA).toHaveLength(2)
    expect(onB).toEqual(['1', '2'])
    expect(live.at(-1)).toBe('It is sunny')
  })

  it('a conflicting update keeps the server version by default, at a revision above both, and reports it', async () => {
    const server = await loopback()
    const a = await device(server)
    const b = await device(server)
    a.sync.start()
    b.sync.start()
    const { session_id } = await a.store.create({})
    const { entry_id } = await a.store.append({ session_id, message: assistant('v0') })
    await a.sync.flush()
    await b.sync.flush()
    server.online = false
    for (let i = 1; i <= 3; i++) await a.store.updateMessage({ session_id, entry_id, content: text(`a${i}`) })
    await b.store.updateMessage({ session_id, entry_id, content: text('b1') })
    server.online = true
    b.sync.stop()
    b.sync.start()
    await b.sync.flush()
    const conflicts: Conflict[] = []
    a.sync.conflicts$.subscribe((c) => conflicts.push(c))
    a.sync.stop()
    a.sync.start()
    await a.sync.flush()
    await b.sync.flush()
    expect(conflicts).toHaveLength(1)
    expect(conflicts[0]).toMatchObject({
      entry_id,
      local: { revision: 3 },
      server: { revision: 1 },
      resolved: { revision: 4 },
    })
    for (const s of [a.store, b.store, server.store]) {
      const e = (await s.getMessage({ session_id, entry_id }))!.entry
      expect(e).toMatchObject({ revision: 4, message: { content: text('b1') } })
    }
  })

  it('an app resolver can keep the local version instead', async () => {
    const server = await loopback()
    const a = await device(server)
    const { session_id } = await a.store.create({})
    const { entry_id } = await a.store.append({ session_id, message: assistant('v0') })
    a.sync.start()
    await a.sync.flush()
    a.sync.close()
    const mine = createSync(a.store, {
      url: 'x',
      transport: server.transport(),
      resolveConflict: ({ local }) => (local.kind === 'message' ? local.message : undefined),
    })
    cleanup.push(() => mine.close())
    await server.store.updateMessage({ session_id, entry_id, content: text('server edit') })
    await a.store.updateMessage({ session_id, entry_id, content: text('local edit') })
    mine.start()
    await mine.flush()
    const e = (await server.store.getMessage({ session_id, entry_id }))!.entry
    expect(e).toMatchObject({ revision: 2, message: { content: text('local edit') } })
    expect((await a.store.getMessage({ session_id, entry_id }))!.entry).toEqual(e)
  })

  it('a change the server refuses is reported with its data and kept until acknowledged', async () => {
    const server = await loopback()
    const a = await device(server)
    a.sync.start()
    const { session_id } = await a.store.create({})
    await a.sync.flush()
    a.sync.stop()
    await server.store.delete({ session_id })
    const lost = await a.store.append({ session_id, message: user('written while deleted elsewhere') })
    const refused: Rejection[] = []
    a.sync.rejected$.subscribe((r) => refused.push(r))
    a.sync.start()
    await a.sync.flush()
    // The entry and the leaf move that came with it: both refused, neither dropped.
    expect(refused.map((r) => [r.change.type, r.code])).toEqual([
      ['entry', 'session/not_found'],
      ['leaf', 'session/not_found'],
    ])
    const r = refused[0]
    expect(r).toMatchObject({
      change: {
        type: 'entry',
        entry: { id: lost.entry_id, message: user('written while deleted elsewhere') },
      },
    })
    expect(await a.sync.rejections()).toEqual(refused)
    // The server's delete reached this device too; the refused entry survives in the rejection.
    expect(await a.store.get({ session_id })).toBeNull()
    for (const x of refused) await a.sync.acknowledge(x.id)
    expect(await a.sync.rejections()).toHaveLength(0)
    expect(await server.store.get({ session_id })).toBeNull()
  })
})

// Faults between devices and the server (a lost answer, duplicated and reordered deliveries, a
// stale checkpoint, a crash before the push), in clear and end-to-end encrypted with every
// device's store encrypted at rest over one keyring: there no fault may raise an integrity alarm.
describe.each(['clear', 'encrypted'] as const)('faults on the way (%s)', (mode) => {
  let sealed: Sealed | undefined
  beforeAll(async () => {
    sealed = mode === 'encrypted' ? await encryptedStores() : undefined
  })
  /** The server's sessions as a device must hold them: opened when sealed. */
  const truth = async (server: Loopback, sessions: string[]) => {
    const held = await replicaSnapshot(server.store)
    return sealed ? opened(sealed.keyring, held, sessions) : held
  }

  it('a push retried after its response was lost applies once', async () => {
    const server = await loopback()
    const a = await device(server, { sealed })
    const { session_id } = await a.store.create({})
    const { entry_id } = await a.store.append({ session_id, message: assistant('x') })
    await a.store.updateMessage({ session_id, entry_id, content: text('y') })
    server.loseNextPushResponse = true
    const added: unknown[] = []
    server.store.on('session::message-added').subscribe((e) => added.push(e))
    const conflicts: Conflict[] = []
    a.sync.conflicts$.subscribe((c) => conflicts.push(c))
    a.sync.start()
    await a.sync.flush()
    // The retry is the same change: the server answers it unchanged, no conflict with itself.
    expect(conflicts).toEqual([])
    expect(server.requests.push).toBe(2)
    expect(added).toHaveLength(1)
    expect(await truth(server, [session_id])).toEqual(await replicaSnapshot(a.store))
    expect(a.refused).toEqual([])
  })

  it('a push whose answer was lost, retried after a reload (store and sync closed and opened again), applies once', async () => {
    const server = await loopback()
    const base = server.transport()
    const name = `lost-then-reload-${mode}-${Date.now()}`
    const first = await device(server, {
      sealed,
      store: await deviceStore(sealed, indexedDbStorage({ name })),
      // The first push reaches the server and its answer is lost; the device is offline after it.
      transport: {
        ...base,
        push: async (request) => {
          if (gone)
            throw Object.assign(new Error('network: offline'), { name: 'TransportError', retryable: true })
          try {
            return await base.push(request)
          } catch (e) {
            gone = true
            lost()
            throw e
          }
        },
      },
    })
    let gone = false
    let lost!: () => void
    const answerLost = new Promise<void>((resolve) => (lost = resolve))
    const { session_id } = await first.store.create({})
    const { entry_id } = await first.store.append({ session_id, message: assistant('x') })
    await first.store.updateMessage({ session_id, entry_id, content: text('y') })
    server.loseNextPushResponse = true
    const added: unknown[] = []
    server.store.on('session::message-added').subscribe((e) => added.push(e))
    first.sync.start()
    await answerLost
    expect(server.requests.push).toBe(1)
    await first.sync.close()
    await first.store.close()
    // Reloaded: the same database, a new store and sync, online.
    const again = await device(server, {
      sealed,
      store: await deviceStore(sealed, indexedDbStorage({ name })),
    })
    const conflicts: Conflict[] = []
    again.sync.conflicts$.subscribe((c) => conflicts.push(c))
    again.sync.start()
    await again.sync.flush()
    // The retry is the very change sent before the reload: answered unchanged, no self-conflict.
    expect(conflicts).toEqual([])
    expect(server.requests.push).toBe(2)
    expect(added).toHaveLength(1)
    expect(await again.sync.rejections()).toEqual([])
    expect(await truth(server, [session_id])).toEqual(await replicaSnapshot(again.store))
    expect([...first.refused, ...again.refused]).toEqual([])
    // Answered: no sealed form is kept any more.
    const kv = (await again.store.storage.sideRecords!('kv')).map((r) => String(r.key))
    expect(kv.filter((k) => k.startsWith('sync:sealed-push:'))).toEqual([])
  })

  it('duplicated and reordered stream deliveries, and a stale checkpoint, still converge with no duplicate events', async () => {
    const server = await loopback()
    const base = server.transport()
    let held: Parameters<Parameters<Transport['stream']>[1]>[0] | undefined
    // Delivers every stream message twice, and each one only after the next (swapped pairs).
    const shuffled: Transport = {
      ...base,
      stream: (since, onMessage, onClose) =>
        base.stream(
          since,
          (m) => {
            if (!held) return void (held = m)
            onMessage(m)
            onMessage(held)
            onMessage(m)
            held = undefined
          },
          onClose,
        ),
    }
    const a = await device(server, { sealed })
    const b = await device(server, { transport: shuffled, sealed })
    a.sync.start()
    b.sync.start()
    const { session_id } = await a.store.create({})
    await a.sync.flush()
    await b.sync.flush()
    const added: string[] = []
    b.store.on('session::message-added').subscribe((e) => added.push(e.entry_id))
    for (let i = 0; i < 6; i++) {
      await a.store.append({ session_id, message: user(`m${i}`) })
      await a.sync.flush()
    }
    // Every frame of the shuffled stream has reached B before it catches up.
    await server.delivered()
    await b.sync.flush()
    expect(await replicaSnapshot(b.store)).toEqual(await truth(server, [session_id]))
    expect(new Set(added).size).toBe(added.length)
    expect(added).toHaveLength(6)

    // A device whose checkpoint is stale pulls everything again: nothing changes, nothing fires.
    const events: unknown[] = []
    b.store.on('session::message-added').subscribe((e) => events.push(e))
    await b.store.applyReplica([], {
      policy: 'pull',
      side: [{ store: 'kv', key: 'sync:checkpoint', value: 0 }],
    })
    b.sync.close()
    const again = createSync(b.store, { url: 'x', transport: base, ...syncKeys(sealed) })
    cleanup.push(() => again.close())
    again.start()
    await again.flush()
    expect(events).toHaveLength(0)
    expect(await replicaSnapshot(b.store)).toEqual(await truth(server, [session_id]))
    expect(a.refused).toEqual([])
    expect(b.refused).toEqual([])
  })

  it('the outbox survives a crash before the push: a reopened store pushes what was queued', async () => {
    const server = await loopback()
    const name = `sync-crash-${Date.now()}`
    const first = await deviceStore(sealed, indexedDbStorage({ name }))
    const s1 = createSync(first, { url: 'x', transport: server.transport(), ...syncKeys(sealed) })
    const { session_id } = await first.create({ title: 'queued' })
    await first.append({ session_id, message: user('kept') })
    s1.close()
    await first.close()
    const second = await deviceStore(sealed, indexedDbStorage({ name }))
    const { sync, refused } = await device(server, { store: second, sealed })
    expect((await firstValueFrom(sync.status$.pipe(filter((s) => s.pending > 0)))).pending).toBeGreaterThan(0)
    sync.start()
    await sync.flush()
    expect(await truth(server, [session_id])).toEqual(await replicaSnapshot(second))
    expect((await server.store.get({ session_id }))!.meta.message_count).toBe(1)
    expect(refused).toEqual([])
  })
})
