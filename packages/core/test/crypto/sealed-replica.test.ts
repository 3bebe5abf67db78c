import { beforeAll, describe, expect, it } from 'vitest'
import {
  createStore,
  memoryStorage,
  type ReplicaChange,
  type SessionMeta,
  type Store,
} from '../../src/index.js'
import type { ContentBlock, SessionEntry } from '../../src/model/model.js'
import { parseReplicaChange } from '../../src/replica/index.js'
import { parseStoredEntry, parseStoredMeta } from '../../src/wire.js'
import {
  Keyring,
  sealAttachmentBytes,
  sealAttachmentMeta,
  sealEntry,
  sealMeta,
  type SealedMeta,
} from '../../src/crypto/index.js'

// A server's replica holding sealed sessions (end-to-end encrypted sync): the one validator takes
// sealed records beside clear ones, and the replica rules reconcile them as they do clear ones,
// never reading inside a box.
let ring: Keyring
beforeAll(async () => {
  ring = await Keyring.create({ passphrase: 'correct horse battery staple' })
})

const meta = (title: string, at = 1): SessionMeta => ({
  session_id: 's_sealed',
  title,
  description: '',
  status: 'idle',
  kind: 'user',
  metadata: {},
  created_at: at,
  updated_at: at,
  message_count: 0,
})
const message = (id: string, text: string, extra: ContentBlock[] = []): SessionEntry => ({
  id,
  parent_id: null,
  timestamp: 5,
  revision: 0,
  kind: 'message',
  message: { role: 'user', content: [{ type: 'text', text }, ...extra], timestamp: 5 },
})

/** As the wire hands it over: JSON, then the one validator. */
const wire = (c: unknown): ReplicaChange => parseReplicaChange(JSON.parse(JSON.stringify(c)), 'change')

async function server(): Promise<Store> {
  return createStore({ storage: memoryStorage(), multiTab: false })
}

describe('sealed records in replicated changes', () => {
  it('pass the one validator (and a server storage reads them back); malformed sealed records are refused', async () => {
    const m = await sealMeta(ring, meta('secret'))
    const e = await sealEntry(ring, 's_sealed', message('e1', 'secret'))
    expect(wire({ type: 'meta', meta: m, create: true })).toMatchObject({ meta: { title: m.title } })
    expect(wire({ type: 'entry', session_id: 's_sealed', entry: e })).toMatchObject({ entry: { box: e.box } })
    expect(parseStoredMeta(JSON.parse(JSON.stringify(m)), 'meta')).toMatchObject({ title: m.title })
    expect(parseStoredEntry(JSON.parse(JSON.stringify(e)), 'entry')).toMatchObject({ box: e.box })
    expect(() => wire({ type: 'entry', session_id: 's_sealed', entry: { ...e, box: 7 } })).toThrow(/box/)
    expect(() => wire({ type: 'meta', meta: { ...m, title: { rev: -1, box: 'x' } } })).toThrow(/rev/)
    expect(() => wire({ type: 'meta', meta: { ...m, metadata: { owner: 'a' } } })).toThrow(/\$sealed/)
  })

  it('a sealed record nested deeper than the bound is refused by the depth walk, in a change and read back', async () => {
    const m = await sealMeta(ring, meta('secret'))
    const e = await sealEntry(ring, 's_sealed', message('e1', 'secret'))
    // Checked once for depth with the change (or stored record) around it, not again by itself.
    let deep: unknown = 'x'
    for (let i = 0; i < 200; i++) deep = [deep]
    const entry = { ...e, attachment_ids: deep }
    const metaDeep = { ...m, metadata: { ...m.metadata, tag: deep } }
    expect(() => wire({ type: 'entry', session_id: 's_sealed', entry })).toThrow(/nested deeper than/)
    expect(() => wire({ type: 'meta', meta: metaDeep, create: true })).toThrow(/nested deeper than/)
    expect(() => parseStoredEntry(entry, 'entry')).toThrow(/nested deeper than/)
    expect(() => parseStoredMeta(metaDeep, 'meta')).toThrow(/nested deeper than/)
  })

  it('a sealed entry pushed again at its revision with another box is a conflict, with the same box unchanged', async () => {
    const store = await server()
    const m = await sealMeta(ring, meta('t'))
    const e = await sealEntry(ring, 's_sealed', message('e1', 'one'))
    const other = await sealEntry(ring, 's_sealed', message('e1', 'two'))
    const [created, added] = await store.applyReplica(
      [
        wire({ type: 'meta', meta: m, create: true }),
        wire({ type: 'entry', session_id: 's_sealed', entry: e, base_revision: null }),
      ],
      { policy: 'push' },
    )
    expect([created.status, added.status]).toEqual(['applied', 'applied'])
    const [again, clash] = await store.applyReplica(
      [
        wire({ type: 'entry', session_id: 's_sealed', entry: e, base_revision: null }),
        wire({ type: 'entry', session_id: 's_sealed', entry: other, base_revision: null }),
      ],
      { policy: 'push' },
    )
    expect(again.status).toBe('unchanged')
    expect(clash).toMatchObject({ status: 'conflict', current: { box: e.box } })
    // A newer revision on its base replaces the box.
    const next = await sealEntry(ring, 's_sealed', { ...message('e1', 'three'), revision: 1 })
    const [updated] = await store.applyReplica(
      [wire({ type: 'entry', session_id: 's_sealed', entry: next, base_revision: 0 })],
      { policy: 'push' },
    )
    expect(updated.status).toBe('applied')
    await store.engine.ensureLoaded('s_sealed')
    expect(store.engine.state.sessions.get('s_sealed')!.entries!.get('e1')).toMatchObject({
      revision: 1,
      box: next.box,
    })
  })

  it('an attachment a sealed message references cannot be deleted', async () => {
    const store = await server()
    const bytes = new TextEncoder().encode('file')
    const a = {
      attachment_id: 'a1',
      session_id: 's_sealed',
      name: 'f.txt',
      mime: 'text/plain',
      size: bytes.length,
      sha256: '0'.repeat(64),
      created_at: 2,
    }
    const sealedBytes = await sealAttachmentBytes(ring, 's_sealed', 'a1', bytes)
    const stored = {
      ...(await sealAttachmentMeta(ring, a)),
      size: sealedBytes.length,
      sha256: 'f'.repeat(64),
    }
    const e = await sealEntry(
      ring,
      's_sealed',
      message('e1', 'see', [
        { type: 'file', attachment_id: 'a1', name: 'f.txt', mime: 'text/plain', size: 4 },
      ]),
    )
    expect(e).toMatchObject({ attachment_ids: ['a1'] })
    const results = await store.applyReplica(
      [
        wire({ type: 'meta', meta: await sealMeta(ring, meta('t')), create: true }),
        {
          ...wire({ type: 'attachment', session_id: 's_sealed', attachment: stored }),
          bytes: new Blob([sealedBytes as Uint8Array<ArrayBuffer>]),
        } as ReplicaChange,
        wire({ type: 'entry', session_id: 's_sealed', entry: e, base_revision: null }),
        wire({ type: 'detach', session_id: 's_sealed', attachment_id: 'a1' }),
      ],
      { policy: 'push' },
    )
    expect(results.map((r) => r.status)).toEqual(['applied', 'applied', 'applied', 'rejected'])
    expect(results[3]).toMatchObject({ code: 'session/attachment_in_use' })
  })

  it('a sealed meta field pushed with a lower counter than held does not replace it (every replica keeps the highest)', async () => {
    const store = await server()
    const first = await sealMeta(ring, meta('first'))
    const high = await sealMeta(ring, meta('high'), {
      previous: { ...first, title: { ...first.title, rev: 9 } },
      changed: ['title'],
    })
    const low = await sealMeta(ring, meta('low'), { previous: first, changed: ['title'] })
    expect([high.title.rev, low.title.rev]).toEqual([10, 1])
    await store.applyReplica([wire({ type: 'meta', meta: first, create: true })], { policy: 'push' })
    await store.applyReplica([wire({ type: 'meta', meta: high, fields: ['title'] })], { policy: 'push' })
    await store.applyReplica([wire({ type: 'meta', meta: low, fields: ['title'] })], { policy: 'push' })
    const held = (await store.get({ session_id: 's_sealed' }))!.meta as unknown as SealedMeta
    expect(held.title).toEqual(high.title)
  })
})
