import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boundedName, sessionFileName } from '../../packages/server/src/storage/file/file-names.js'
import { hostileValidIds } from '../../packages/core/test/hostile-cases.js'
import {
  cleanupAfterEach,
  failure,
  postJson,
  pullAll,
  rpc,
  startServer,
  user,
  type ServerProcess,
} from './helpers.js'

// The findings of issue 8, replayed against a real server process on its file storage with two
// principals: each must be refused with the contract's error, and neither principal may be
// stopped from writing, nor the server from restarting.
const { defer, dataDir } = cleanupAfterEach('hostile')
const ALICE = 'ta'
const BOB = 'tb'

async function serve(dir: string, ...args: string[]): Promise<ServerProcess> {
  const s = await startServer([
    '--data-dir',
    dir,
    '--token',
    `alice=${ALICE}`,
    '--token',
    `bob=${BOB}`,
    '--max-body-bytes',
    String(8 << 20),
    ...args,
  ])
  defer(() => s.stop('SIGKILL'))
  return s
}

async function call(
  url: string,
  fn: string,
  body: unknown,
  token: string,
): Promise<{ status: number; code?: string; message?: string }> {
  const res = await postJson(`${url}/rpc/${fn}`, body, token)
  if (res.ok) return { status: res.status }
  const e = await failure(res)
  return { status: res.status, code: (e as { code?: string }).code, message: e.message }
}

/** Both principals can still write and read back. */
async function bothWrite(url: string, label: string): Promise<void> {
  for (const token of [ALICE, BOB]) {
    const { session_id } = await rpc(url, 'session::create', { title: label }, token)
    await rpc(url, 'session::append', { session_id, message: user(`${label} by ${token}`) }, token)
    expect((await rpc(url, 'session::messages', { session_id }, token)).messages).toHaveLength(1)
  }
}

const texts = (page: { messages: Array<{ message?: { content: Array<{ text?: string }> } }> }): string[] =>
  page.messages.map((m) => m.message?.content[0]?.text ?? '')

describe('the findings of issue 8, against a real server on its files', () => {
  it('a 3,000-character session_id or entry_id is a 400 naming the field; every tenant keeps writing; the server restarts', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const { session_id } = await rpc(a.url, 'session::create', { title: 'mine' }, ALICE)
    expect(await call(a.url, 'session::ensure', { session_id: 'x'.repeat(3000) }, ALICE)).toMatchObject({
      status: 400,
      code: 'session/invalid_request',
      message: expect.stringContaining('session_id'),
    })
    expect(
      await call(
        a.url,
        'session::append',
        { session_id, entry_id: 'e'.repeat(3000), message: user('x') },
        ALICE,
      ),
    ).toMatchObject({
      status: 400,
      code: 'session/invalid_request',
      message: expect.stringContaining('entry_id'),
    })
    await bothWrite(a.url, 'after')
    expect((await rpc(a.url, 'session::messages', { session_id }, ALICE)).messages).toHaveLength(0)
    await a.stop('SIGKILL')
    const b = await serve(dir)
    await bothWrite(b.url, 'restarted')
    expect(JSON.stringify((await pullAll(b.url, 0, undefined, ALICE)).changes)).not.toContain('x'.repeat(300))
  })

  it('a lone surrogate id is refused, so q\\ud800 and q\\ufffd can never share a file; after a restart Bob reads only his own', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    expect(await call(a.url, 'session::ensure', { session_id: 'q\ud800' }, ALICE)).toMatchObject({
      status: 400,
      code: 'session/invalid_request',
      message: expect.stringContaining('session_id'),
    })
    expect(
      await call(a.url, 'session::append', { session_id: 'q\ud800', message: user('alice secret') }, ALICE),
    ).toMatchObject({ status: 400 })
    await rpc(a.url, 'session::ensure', { session_id: 'q\ufffd' }, ALICE)
    await rpc(a.url, 'session::append', { session_id: 'q\ufffd', message: user('alice secret') }, ALICE)
    // Bob's ensure of Alice's id is answered as for a session he cannot see, never with her data.
    expect(
      JSON.stringify(await call(a.url, 'session::messages', { session_id: 'q\ufffd' }, BOB)),
    ).not.toContain('alice secret')
    await a.stop('SIGKILL')
    const b = await serve(dir)
    expect(
      JSON.stringify(await call(b.url, 'session::messages', { session_id: 'q\ufffd' }, BOB)),
    ).not.toContain('alice secret')
    expect(texts(await rpc(b.url, 'session::messages', { session_id: 'q\ufffd' }, ALICE))).toStrictEqual([
      'alice secret',
    ])
  })

  it('a body nested 100,000 arrays deep is a 400, in metadata, in function call arguments and in a push', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const { session_id } = await rpc(a.url, 'session::create', {}, ALICE)
    // Written as text: JSON.stringify itself cannot serialize such a value.
    const DEEP = '['.repeat(100_000) + '0' + ']'.repeat(100_000)
    const raw = (path: string, template: string): Promise<Response> =>
      fetch(`${a.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ALICE}` },
        body: template.replace('DEEP', DEEP),
      })
    const sid = JSON.stringify(session_id)
    const cases: Array<[string, string, string]> = [
      ['/rpc/session::set-meta', `{"session_id":${sid},"metadata":{"k":DEEP}}`, 'metadata.k'],
      [
        '/rpc/session::append',
        `{"session_id":${sid},"message":{"role":"assistant","content":[{"type":"function_call","id":"c","function_id":"f","arguments":DEEP}],"stop_reason":"end","model":"m","provider":"p","timestamp":0}}`,
        'arguments',
      ],
      [
        '/rpc/session::append',
        `{"session_id":${sid},"custom":{"custom_type":"c","data":DEEP}}`,
        'custom.data',
      ],
      [
        '/sync/push',
        `{"mutations":[{"id":1,"change":{"type":"entry","session_id":${sid},"entry":{"id":"d","parent_id":null,"timestamp":1,"kind":"custom","custom_type":"c","data":DEEP}}}]}`,
        'entry.data',
      ],
    ]
    for (const [path, template, field] of cases) {
      const res = await raw(path, template)
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect([path, res.status, body.error.code]).toStrictEqual([path, 400, 'session/invalid_request'])
      expect(body.error.message).toContain(field)
    }
    await bothWrite(a.url, 'after')
    expect(
      (await rpc(a.url, 'session::messages', { session_id, include_custom: true }, ALICE)).messages,
    ).toHaveLength(0)
  })

  it('a push with hostile ids anywhere (mutation id, session, entry, parent, leaf) is a 400 naming the field, applying nothing', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    const { session_id } = await rpc(a.url, 'session::create', {}, ALICE)
    const entry = (id: string, parent_id: string | null = null) => ({
      id,
      parent_id,
      timestamp: 1,
      kind: 'message',
      message: user('x'),
    })
    const cases: Array<[unknown, unknown, string]> = [
      ['q\ud800', { type: 'delete', session_id }, 'mutations[0].id'],
      [1.5, { type: 'delete', session_id }, 'mutations[0].id'],
      [
        1,
        { type: 'entry', session_id: 'z'.repeat(256), entry: entry('e') },
        'mutations[0].change.session_id',
      ],
      [1, { type: 'entry', session_id, entry: entry('\udc00') }, 'mutations[0].change.entry.id'],
      [
        1,
        { type: 'entry', session_id, entry: entry('e', 'p'.repeat(3000)) },
        'mutations[0].change.entry.parent_id',
      ],
      [1, { type: 'leaf', session_id, entry_id: 'q\ud800' }, 'mutations[0].change.entry_id'],
    ]
    for (const [id, change, field] of cases) {
      const res = await postJson(
        `${a.url}/sync/push`,
        {
          mutations: [
            { id, change },
            { id: 2, change: { type: 'delete', session_id } },
          ],
        },
        ALICE,
      )
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect([field, res.status, body.error.code]).toStrictEqual([field, 400, 'session/invalid_request'])
      expect(body.error.message).toContain(field)
    }
    // The valid delete that rode along in every batch was never applied.
    expect(await rpc(a.url, 'session::get', { session_id }, ALICE)).not.toBeNull()
  })

  it('hostile-but-valid ids: case, NFC and NFD twins, reserved Windows names, 255 bytes are distinct sessions with distinct files, across a restart', async () => {
    const dir = await dataDir()
    const a = await serve(dir)
    for (const id of hostileValidIds) {
      await rpc(a.url, 'session::ensure', { session_id: id, title: id }, ALICE)
      await rpc(
        a.url,
        'session::append',
        { session_id: id, entry_id: id, message: user(`text of ${id}`) },
        ALICE,
      )
    }
    await a.stop('SIGKILL')
    const files = (await readdir(dir)).filter((n) => n.endsWith('.jsonl'))
    const names = hostileValidIds.map(sessionFileName)
    expect(new Set(names).size).toBe(hostileValidIds.length)
    // Distinct even where the file system folds case: every name is lowercase ASCII already.
    expect(new Set(names.map((n) => n.toLowerCase().normalize('NFKC'))).size).toBe(hostileValidIds.length)
    for (const n of names) {
      expect(n).toMatch(/^[a-z0-9-]{0,32}\+[0-9a-f]{64}\.jsonl$/)
      expect(Buffer.byteLength(n)).toBeLessThanOrEqual(255)
      expect(files).toContain(n)
    }
    const b = await serve(dir)
    for (const id of hostileValidIds) {
      expect((await rpc(b.url, 'session::get', { session_id: id }, ALICE)).meta.title).toBe(id)
      expect(texts(await rpc(b.url, 'session::messages', { session_id: id }, ALICE))).toStrictEqual([
        `text of ${id}`,
      ])
    }
  })
})

describe('a data directory written by the earlier layout still opens', () => {
  const meta = (session_id: string, owner: string, title: string) => ({
    session_id,
    title,
    description: '',
    status: 'idle',
    kind: 'user',
    metadata: { owner },
    created_at: 1,
    updated_at: 1,
    message_count: 0,
  })
  const entry = (id: string, parent_id: string | null, text: string) => ({
    id,
    parent_id,
    timestamp: 2,
    revision: 0,
    kind: 'message',
    message: user(text),
  })
  const lines = (records: unknown[]): string => records.map((r) => JSON.stringify(r) + '\n').join('')

  it('percent-encoded files are renamed; the file q\\ud800 and q\\ufffd shared and the bricking 3,000-character journal line are set aside; the server starts', async () => {
    const dir = await dataDir()
    await mkdir(join(dir, '.colloquy'), { recursive: true })
    // Bob's ordinary session, an id with characters the old layout escaped.
    await writeFile(
      join(dir, 'Chat%20A.jsonl'),
      lines([
        { type: 'meta', meta: meta('Chat A', 'bob', 'bob chat'), tx: 1 },
        {
          type: 'append',
          entry: entry('b1', null, 'hello'),
          meta: { ...meta('Chat A', 'bob', 'bob chat'), message_count: 1 },
          tx: 2,
        },
      ]),
    )
    // What the old server made of Alice's q\ud800 and Bob's q\ufffd: one file, both metas in it.
    await writeFile(
      join(dir, 'q%EF%BF%BD.jsonl'),
      lines([
        { type: 'meta', meta: meta('q\ud800', 'alice', 'alice'), tx: 3 },
        {
          type: 'append',
          entry: entry('a1', null, 'alice secret'),
          meta: { ...meta('q\ud800', 'alice', 'alice'), message_count: 1 },
          tx: 4,
        },
        { type: 'meta', meta: meta('q\ufffd', 'bob', 'bob'), tx: 5 },
      ]),
    )
    // The journal of the bricked server: a commit for a 3,000-character id its files never took.
    const long = 'x'.repeat(3000)
    await writeFile(
      join(dir, '.colloquy', 'journal.jsonl'),
      [
        JSON.stringify({ tx: 5, side: [], snapshot: true }),
        JSON.stringify({
          tx: 6,
          side: [],
          writes: [[`${long}.jsonl`, lines([{ type: 'meta', meta: meta(long, 'alice', 'long'), tx: 6 }])]],
        }),
        JSON.stringify({
          tx: 7,
          side: [],
          writes: [
            [
              'Chat%20A.jsonl',
              lines([
                {
                  type: 'append',
                  entry: entry('b2', 'b1', 'after the brick'),
                  meta: { ...meta('Chat A', 'bob', 'bob chat'), message_count: 2 },
                  tx: 7,
                },
              ]),
            ],
          ],
        }),
      ].join('\n') + '\n',
    )

    const s = await serve(dir)
    expect(texts(await rpc(s.url, 'session::messages', { session_id: 'Chat A' }, BOB))).toStrictEqual([
      'hello',
      'after the brick',
    ])
    expect(
      JSON.stringify(await call(s.url, 'session::messages', { session_id: 'q\ufffd' }, BOB)),
    ).not.toContain('alice secret')
    expect(JSON.stringify(await call(s.url, 'session::list', {}, BOB))).not.toContain('alice')
    expect(JSON.stringify(await pullAll(s.url, 0, undefined, BOB))).not.toContain('alice secret')
    await bothWrite(s.url, 'migrated')
    const root = await readdir(dir)
    expect(root.filter((n) => n.endsWith('.jsonl') && !n.includes('+'))).toStrictEqual([])
    expect(root).toContain(sessionFileName('Chat A'))
    // Set aside, not deleted: an operator can still look.
    const orphans = await readdir(join(dir, '.colloquy', 'orphans'))
    // Under the bounded name of the name it had (a name found on disk may leave no room for a suffix).
    expect(orphans).toContain(boundedName('q%EF%BF%BD.jsonl'))
    expect(
      await readFile(join(dir, '.colloquy', 'orphans', boundedName('q%EF%BF%BD.jsonl')), 'utf8'),
    ).toContain('alice secret')
    expect(s.output()).toMatch(/q%EF%BF%BD\.jsonl: it holds records of 2 sessions; moved aside/)
    await s.stop()
    const again = await serve(dir)
    expect(texts(await rpc(again.url, 'session::messages', { session_id: 'Chat A' }, BOB))).toStrictEqual([
      'hello',
      'after the brick',
    ])
  })
})
