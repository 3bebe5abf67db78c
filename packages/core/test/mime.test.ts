import { describe, expect, it } from 'vitest'
import {
  TRIGGER_TYPES,
  createStore,
  memoryStorage,
  type AttachmentMeta,
  type ReplicaChange,
  type Storage,
  type Store,
} from '../src/index.js'
import { isValidMime, mimeOrOctet } from '../src/wire.js'
import { OCTET_STREAM } from '../src/validation/mime.js'

const GOOD = [
  'image/png',
  'application/octet-stream',
  'text/plain; charset=utf-8',
  'text/plain;charset="utf-8"',
  'application/vnd.api+json',
  'multipart/form-data; boundary=x; charset=UTF-8',
  'Application/X-Custom.Type_1',
  'text/plain; q="a \\" b"',
  `a/${'b'.repeat(127)}`,
  `a/b; x=${'y'.repeat(248)}`,
]
const BAD = [
  '',
  ' ',
  'image',
  'image/',
  '/png',
  'image/png/x',
  'image/*',
  '*/*',
  'image/png\r\nX-Injected: 1',
  'image/png\n',
  'image/png\u0000',
  'text/plain; charset=utf-8\u007f',
  'image/\u0007png',
  'image/pngé',
  'ïmage/png',
  ' image/png',
  'image/png ',
  'image /png',
  'text/plain;',
  'text/plain; charset',
  'text/plain; charset=',
  'text/plain; charset="unterminated',
  '-a/b',
  'a/.b',
  `a/${'b'.repeat(128)}`,
  `a/b; x=${'y'.repeat(249)}`,
  'text/plain; a=b; c=d\r\n',
]

describe('the mime rule', () => {
  it.each(GOOD)('accepts %j', (m) => {
    expect(isValidMime(m)).toBe(true)
    expect(mimeOrOctet(m)).toBe(m)
  })
  it.each(BAD)('refuses %j', (m) => {
    expect(isValidMime(m)).toBe(false)
    expect(mimeOrOctet(m)).toBe(OCTET_STREAM)
  })
  it('refuses what is not a string', () => {
    for (const v of [undefined, null, 1, {}, ['image/png']]) expect(isValidMime(v)).toBe(false)
  })
})

async function fixture(
  storage: Storage = memoryStorage(),
): Promise<{ store: Store; events: string[]; session_id: string }> {
  const store = await createStore({ storage, multiTab: false })
  const { session_id } = await store.create({})
  const events: string[] = []
  for (const t of TRIGGER_TYPES) store.on(t).subscribe(() => events.push(t))
  return { store, events, session_id }
}
const meta = (session_id: string, mime: string): AttachmentMeta => ({
  attachment_id: 'a_x',
  session_id,
  name: 'x.bin',
  mime,
  size: 2,
  sha256: '8c2574892063f995fdf756bce07f46c1a5193e54cd52837ed91e32008ccf41ac',
  created_at: 1,
})

describe('every path that sets a mime checks it', () => {
  it.each(BAD.filter((m) => m.trim() !== ''))(
    'putAttachment refuses %j, writing nothing and firing nothing',
    async (mime) => {
      const { store, events, session_id } = await fixture()
      await expect(
        store.putAttachment({ session_id, name: 'x.bin', mime, data: 'aGk=' }),
      ).rejects.toMatchObject({ code: 'session/invalid_request' })
      await expect(
        store.putAttachment({ session_id, name: 'x.bin', mime, file: new Blob(['hi']) }),
      ).rejects.toMatchObject({ code: 'session/invalid_request' })
      await expect(
        store.call('session::put-attachment', { session_id, name: 'x.bin', mime, data: 'aGk=' }),
      ).rejects.toMatchObject({ code: 'session/invalid_request' })
      expect((await store.listAttachments({ session_id })).attachments).toStrictEqual([])
      expect(events).toStrictEqual([])
    },
  )

  it('a blank mime is application/octet-stream; a File whose own type is no media type is stored as bytes', async () => {
    const { store, session_id } = await fixture()
    expect(
      (await store.putAttachment({ session_id, name: 'a.bin', mime: ' ', data: 'aGk=' })).attachment.mime,
    ).toBe(OCTET_STREAM)
    expect(
      (await store.putAttachment({ session_id, name: 'b.bin', file: new Blob(['hi'], { type: 'weird' }) }))
        .attachment.mime,
    ).toBe(OCTET_STREAM)
    expect(
      (
        await store.putAttachment({
          session_id,
          name: 'c.txt',
          mime: 'text/plain; charset=utf-8',
          data: 'aGk=',
        })
      ).attachment.mime,
    ).toBe('text/plain; charset=utf-8')
  })

  it('applyReplica refuses a pushed attachment with a bad mime and reads a pulled one as octet-stream', async () => {
    const { store, events, session_id } = await fixture()
    const change = (mime: string): ReplicaChange => ({
      type: 'attachment',
      session_id,
      attachment: meta(session_id, mime),
      bytes: new Blob(['hi']),
    })
    const [pushed] = await store.applyReplica([change('image/png\r\nX: 1')], { policy: 'push' })
    expect(pushed).toMatchObject({ status: 'rejected', code: 'session/invalid_request' })
    expect((await store.listAttachments({ session_id })).attachments).toStrictEqual([])
    expect(events).toStrictEqual([])
    const [pulled] = await store.applyReplica([change('image/png\r\nX: 1')], { policy: 'pull' })
    expect(pulled.status).toBe('applied')
    expect((await store.listAttachments({ session_id })).attachments.map((a) => a.mime)).toStrictEqual([
      OCTET_STREAM,
    ])
    const [list] = await store.applyReplica(
      [
        {
          type: 'attachments',
          session_id,
          attachments: [{ ...meta(session_id, 'x\u0000'), attachment_id: 'a_y' }],
        },
      ],
      { policy: 'pull' },
    )
    expect(list.status).toBe('applied')
    expect(
      (await store.listAttachments({ session_id })).attachments.map((a) => [a.attachment_id, a.mime]),
    ).toStrictEqual([['a_y', OCTET_STREAM]])
  })

  it('importSession refuses an attachment with a bad mime, writing nothing', async () => {
    const { store, events } = await fixture()
    const before = (await store.list({})).sessions.length
    const data = {
      meta: { session_id: 's_imp', created_at: 1 } as never,
      entries: [],
      active_leaf: null,
      attachments: [{ attachment_id: 'a_1', name: 'x', mime: 'text/html\r\n', bytes: new Uint8Array([1]) }],
    }
    await expect(store.importSession(data)).rejects.toMatchObject({ code: 'session/invalid_request' })
    expect((await store.list({})).sessions.length).toBe(before)
    expect(events).toStrictEqual([])
  })

  it('a mime stored before the rule is served as application/octet-stream', async () => {
    const storage = memoryStorage()
    await storage.open()
    const session_id = 's_old'
    const bad = meta(session_id, 'text/html\r\nSet-Cookie: a=b')
    await storage.transact(async () => ({
      deleted: new Set(),
      heads: new Map([
        [
          session_id,
          {
            meta: {
              session_id,
              title: '',
              description: '',
              status: 'idle',
              kind: 'user',
              created_at: 1,
              updated_at: 1,
              message_count: 0,
            } as never,
            leaf: null,
            v: 1,
            attachments: [bad],
          },
        ],
      ]),
      entries: new Map(),
      side: [],
      blobs: [
        {
          op: 'put',
          session_id,
          attachment_id: bad.attachment_id,
          bytes: new Blob(['hi'], { type: bad.mime.slice(0, 9) }),
        },
      ],
    }))
    const store = await createStore({ storage, multiTab: false })
    const blob = await store.getAttachmentBlob(session_id, bad.attachment_id)
    expect(blob!.type).toBe(OCTET_STREAM)
    expect(await blob!.text()).toBe('hi')
  })
})
