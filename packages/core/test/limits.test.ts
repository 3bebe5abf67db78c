import { describe, expect, it } from 'vitest'
import { firstValueFrom, type Observable } from 'rxjs'
import { SessionError, type ReplicaChange, type Store, type TriggerType } from '../src/index.js'
import { LIMITS, parseEventConfig, parseRequest } from '../src/wire.js'
import { utf8Bytes } from '../src/validation/limits.js'
import { deepArray, deepResults, hostileValidIds, idFields, invalidIds, jsonFields } from './hostile-cases.js'
import { numberedStore, recordEvents } from './numbered-store.js'
import { showPath, userMessage as userMessageCase, withValue } from './validation-cases.js'

const userMessage = userMessageCase as never

async function fixture(): Promise<{ store: Store; events: Array<[TriggerType, unknown]> }> {
  const store = await numberedStore()
  const { session_id } = await store.create({ title: 'T' })
  for (let i = 0; i < 3; i++) await store.append({ session_id, message: userMessage })
  await store.append({
    session_id,
    message: {
      role: 'function_result',
      function_call_id: 'c1',
      function_id: 'f',
      content: [],
      timestamp: 0,
    } as never,
  })
  return { store, events: recordEvents(store) }
}

/** Every session with its meta and all entries: "nothing written" is checked against it. */
async function everything(store: Store): Promise<unknown> {
  await store.flush()
  const out: Record<string, unknown> = {}
  for (const [id, s] of store.engine.state.sessions) {
    await store.engine.ensureLoaded(id)
    out[id] = { head: s.head, entries: [...(store.engine.state.sessions.get(id)!.entries?.values() ?? [])] }
  }
  return out
}

async function refused(store: Store, run: () => Promise<unknown>, field: string): Promise<void> {
  const error = await run().then(
    (v) => {
      throw new Error(`accepted: ${JSON.stringify(v).slice(0, 200)}`)
    },
    (e: unknown) => e as SessionError,
  )
  expect(error).toBeInstanceOf(SessionError)
  expect(error.code).toBe('session/invalid_request')
  expect(error.message).toContain(field)
}

describe('ids and names: well-formed, at most 255 UTF-8 bytes', () => {
  it('the documented limits are what the hostile cases assume', () => {
    expect(LIMITS.idBytes).toBe(255)
    expect(LIMITS.nameBytes).toBe(255)
    expect(utf8Bytes(hostileValidIds.at(-1)!)).toBe(255)
    expect(utf8Bytes('\u{1f600}')).toBe(4)
  })

  it.each(
    idFields.flatMap((c) =>
      invalidIds.map(([why, value]) => [`${c.fn} ${showPath(c.path)}: ${why}`, c, value] as const),
    ),
  )('refuses %s, naming the field, writing nothing, firing nothing', async (_, c, value) => {
    const { store, events } = await fixture()
    const before = await everything(store)
    await refused(store, () => store.call(c.fn, withValue(c.base, c.path, value)), showPath(c.path))
    expect(await everything(store)).toStrictEqual(before)
    expect(events).toStrictEqual([])
  })

  it('those requests pass the validator with a valid value there (so the field is the cause)', () => {
    for (const c of idFields) {
      for (const value of hostileValidIds)
        expect(
          () => parseRequest(c.fn, withValue(c.base, c.path, value)),
          `${c.fn} ${showPath(c.path)}`,
        ).not.toThrow()
    }
  })

  it.each(invalidIds)('refuses metadata keys with %s', async (_, key) => {
    const { store, events } = await fixture()
    const before = await everything(store)
    await refused(store, () => store.setMeta({ session_id: 's_001', metadata: { [key]: 1 } }), 'metadata')
    await refused(
      store,
      () => store.ensure({ session_id: 'n', metadata: { nested: { [key]: 1 } } }),
      'metadata.nested',
    )
    expect(await everything(store)).toStrictEqual(before)
    expect(events).toStrictEqual([])
  })

  it('refuses a cursor of a lone surrogate or over 4096 bytes as invalid, not as a bad cursor', async () => {
    const { store } = await fixture()
    await refused(store, () => store.list({ cursor: 'q\ud800' }), 'cursor')
    await refused(store, () => store.messages({ session_id: 's_001', cursor: 'A'.repeat(4100) }), 'cursor')
  })

  it('hostile-but-valid ids each get their own session and entries, and round-trip exactly', async () => {
    const { store } = await fixture()
    for (const id of hostileValidIds) {
      await store.ensure({ session_id: id, title: id })
      await store.append({ session_id: id, entry_id: id, message: userMessage })
      await store.append({
        session_id: id,
        parent_id: id,
        custom: { custom_type: 'x'.repeat(255), data: { [id]: id } },
      })
    }
    for (const id of hostileValidIds) {
      expect((await store.get({ session_id: id }))?.meta.title).toBe(id)
      expect((await store.getMessage({ session_id: id, entry_id: id }))?.entry.id).toBe(id)
      const page = await store.messages({ session_id: id, include_custom: true })
      expect(page.messages.map((m) => m.entry_id)[0]).toBe(id)
      expect(page.messages).toHaveLength(2)
      expect(page.messages[1].custom?.data).toStrictEqual({ [id]: id })
      expect(
        (await store.messages({ session_id: id, from_entry_id: id })).messages.map((m) => m.entry_id),
      ).toStrictEqual([id])
    }
    expect((await store.list({ limit: 500 })).sessions).toHaveLength(hostileValidIds.length + 1)
  })

  it('the calls that take ids as arguments (live queries, byte reads) refuse the same ids; valid ones are looked up', async () => {
    const { store } = await fixture()
    const first = <T>(o: Observable<T>): Promise<T> => firstValueFrom(o)
    for (const [why, bad] of invalidIds) {
      const reads: Array<[string, () => Promise<unknown>]> = [
        ['session$', () => first(store.session$(bad))],
        ['draft$', () => first(store.draft$(bad))],
        ['attachments$', () => first(store.attachments$(bad))],
        ['tree$', () => first(store.tree$(bad))],
        ['entry$ (session)', () => first(store.entry$(bad, 'e'))],
        ['entry$ (entry)', () => first(store.entry$('s_001', bad))],
        ['branch$ (session)', () => first(store.branch$(bad, 'e'))],
        ['branch$ (entry)', () => first(store.branch$('s_001', bad))],
        ['messages$ (session)', () => first(store.messages$({ session_id: bad }))],
        [
          'messages$ (from_entry_id)',
          () => first(store.messages$({ session_id: 's_001', from_entry_id: bad })),
        ],
        ['getAttachmentBlob', () => store.getAttachmentBlob(bad, 'a')],
        ['attachmentUrl', () => store.attachmentUrl('s_001', bad)],
      ]
      for (const [name, read] of reads)
        await expect(read(), `${name}: ${why}`).rejects.toMatchObject({ code: 'session/invalid_request' })
    }
    // A valid id that names nothing is unknown, not refused.
    for (const id of hostileValidIds.slice(0, 3)) {
      expect(await first(store.session$(id))).toBeNull()
      expect(await first(store.entry$('s_001', id))).toBeNull()
      expect(await store.getAttachmentBlob('s_001', id)).toBeNull()
    }
  })

  it('event configs take the same id rule', () => {
    expect(() => parseEventConfig('session::message-added', { session_id: 'q\ud800' })).toThrow(
      /session_id.*well-formed/,
    )
    expect(() => parseEventConfig('session::deleted', { session_id: 'z'.repeat(256) })).toThrow(
      /session_id.*255/,
    )
    expect(() => parseEventConfig('session::created', { metadata: { ['\udfff']: 1 } })).toThrow(
      /invalid_request/,
    )
    expect(parseEventConfig('session::deleted', { session_id: '../escape/chat 42:?' })).toStrictEqual({
      session_id: '../escape/chat 42:?',
    })
  })
})

describe('nesting and sizes of JSON values are bounded', () => {
  it.each(jsonFields.map((c) => [`${c.fn} ${showPath(c.path)}`, c] as const))(
    'a value nested 100,000 deep at %s is refused, not a stack overflow',
    async (_, c) => {
      const { store, events } = await fixture()
      const before = await everything(store)
      await refused(
        store,
        () => store.call(c.fn, withValue(c.base, c.path, deepArray(100_000))),
        showPath(c.path),
      )
      expect(await everything(store)).toStrictEqual(before)
      expect(events).toStrictEqual([])
    },
  )

  it('function results nested 100,000 deep through their content are refused', async () => {
    const { store } = await fixture()
    await refused(
      store,
      () =>
        store.append({
          session_id: 's_001',
          message: { role: 'user', content: [deepResults(100_000)], timestamp: 0 } as never,
        }),
      'message.content[0]',
    )
  })

  it('the depth limit counts from the request: 64 levels pass, 65 do not', async () => {
    const { store } = await fixture()
    // { metadata: { k: <n arrays> } }: the body, metadata and k's arrays are n + 2 levels.
    await expect(
      store.ensure({ session_id: 'd', metadata: { k: deepArray(62) as never } }),
    ).resolves.toBeDefined()
    await refused(
      store,
      () => store.ensure({ session_id: 'd2', metadata: { k: deepArray(63) as never } }),
      'nested deeper than 64',
    )
  })

  it('a cyclic object from an in-process caller is refused the same way', async () => {
    const { store } = await fixture()
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    await refused(store, () => store.ensure({ session_id: 'c', metadata: cyclic as never }), 'metadata.self')
  })

  it('an array or object of more than 100,000 members inside a JSON value is refused', async () => {
    const { store } = await fixture()
    await refused(
      store,
      () => store.setMeta({ session_id: 's_001', metadata: { big: new Array(100_001).fill(0) } }),
      'metadata.big',
    )
    await expect(
      store.setMeta({ session_id: 's_001', metadata: { big: new Array(100_000).fill(0) } }),
    ).resolves.toBeDefined()
  })
})

describe('replicated changes and imports pass the same validator', () => {
  const meta = (session_id: string) => ({
    session_id,
    title: '',
    description: '',
    status: 'idle',
    kind: 'user',
    created_at: 1,
    updated_at: 1,
    message_count: 0,
  })
  const entry = (id: string, parent_id: string | null = null) => ({
    id,
    parent_id,
    timestamp: 1,
    revision: 0,
    kind: 'message',
    message: userMessage,
  })
  const bad: Array<[string, unknown, string]> = [
    [
      'a meta with a lone-surrogate id',
      { type: 'meta', meta: meta('q\ud800'), create: true },
      'changes[0].meta.session_id',
    ],
    [
      'an entry with a 256-byte id',
      { type: 'entry', session_id: 's_001', entry: entry('e'.repeat(256), 'e_001') },
      'changes[0].entry.id',
    ],
    [
      'an entry with a bad parent',
      { type: 'entry', session_id: 's_001', entry: entry('n', '\ud800') },
      'changes[0].entry.parent_id',
    ],
    [
      'an entry 100,000 deep',
      {
        type: 'entry',
        session_id: 's_001',
        entry: { ...entry('n', 'e_001'), origin: { a: deepArray(100_000) } },
      },
      'changes[0].entry.origin.a',
    ],
    [
      'a leaf with a bad entry id',
      { type: 'leaf', session_id: 's_001', entry_id: 'x'.repeat(300) },
      'changes[0].entry_id',
    ],
    ['a delete with a bad session id', { type: 'delete', session_id: '\udc00' }, 'changes[0].session_id'],
    ['an unknown type', { type: 'rename', session_id: 's_001' }, 'changes[0].type'],
    [
      'an attachment with a 256-byte id',
      {
        type: 'attachment',
        session_id: 's_001',
        attachment: {
          attachment_id: 'a'.repeat(256),
          session_id: 's_001',
          name: 'x.png',
          mime: 'image/png',
          size: 1,
          sha256: 'f'.repeat(64),
          created_at: 1,
        },
      },
      'changes[0].attachment.attachment_id',
    ],
    [
      'an attachment list with a lone-surrogate name',
      {
        type: 'attachments',
        session_id: 's_001',
        attachments: [
          {
            attachment_id: 'a_1',
            session_id: 's_001',
            name: 'x\ud800',
            mime: 'image/png',
            size: 1,
            sha256: 'f'.repeat(64),
            created_at: 1,
          },
        ],
      },
      'changes[0].attachments[0].name',
    ],
    [
      'a detach with a bad attachment id',
      { type: 'detach', session_id: 's_001', attachment_id: '\udc00' },
      'changes[0].attachment_id',
    ],
  ]
  it.each(bad)('applyReplica refuses %s, applying none of the batch', async (_, change, field) => {
    const { store, events } = await fixture()
    const before = await everything(store)
    const good: ReplicaChange = { type: 'meta', meta: meta('fresh') as never, create: true }
    for (const policy of ['push', 'pull'] as const) {
      await refused(store, () => store.applyReplica([change as ReplicaChange, good], { policy }), field)
    }
    expect(await everything(store)).toStrictEqual(before)
    expect(events).toStrictEqual([])
  })

  it('applyReplica accepts hostile-but-valid ids', async () => {
    const { store } = await fixture()
    const results = await store.applyReplica(
      hostileValidIds.flatMap((id): ReplicaChange[] => [
        { type: 'meta', meta: meta(id) as never, create: true },
        { type: 'entry', session_id: id, entry: entry(id) as never },
      ]),
      { policy: 'push' },
    )
    expect(results.every((r) => r.status === 'applied')).toBe(true)
    for (const id of hostileValidIds)
      expect((await store.getMessage({ session_id: id, entry_id: id }))?.entry.id).toBe(id)
  })

  it('importSession refuses bad ids and deep bodies, writing nothing', async () => {
    const { store, events } = await fixture()
    const before = await everything(store)
    await refused(
      store,
      () => store.importSession({ meta: meta('q\ud800') as never, entries: [], active_leaf: null }),
      'meta.session_id',
    )
    await refused(
      store,
      () =>
        store.importSession({
          meta: meta('i') as never,
          entries: [entry('a'), entry('b'.repeat(256), 'a')] as never,
          active_leaf: null,
        }),
      'entries[1].id',
    )
    await refused(
      store,
      () =>
        store.importSession({
          meta: { ...meta('i'), metadata: { k: deepArray(100_000) } } as never,
          entries: [],
          active_leaf: null,
        }),
      'meta.metadata.k',
    )
    expect(await everything(store)).toStrictEqual(before)
    expect(events).toStrictEqual([])
  })
})
