import { appendFile, cp, mkdir, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  attachmentFolderName,
  attachmentMetaName,
} from '../../packages/server/src/storage/file/attachment-files.js'
import { boundedName, encodeId, sessionFileName } from '../../packages/server/src/storage/file/file-names.js'
import { PLACES } from './data-dir-places.js'
import { cleanupAfterEach, postJson, rpc, startServer, tempDir, user, type ServerProcess } from './helpers.js'

// A real server process over a data directory with a bad entry in each place the storage reads
// on open (data-dir-places.ts, checked against the storage's own calls by
// data-dir-names.test.ts): it starts, warns in its log, and serves the good data.
const { defer, dataDir } = cleanupAfterEach('data-dir')
const TOKEN = 'ta'
const auth = { authorization: `Bearer ${TOKEN}` }
const enc = encodeURIComponent

async function serve(dir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))
  Object.assign(process.env, env)
  try {
    const s = await startServer(['--data-dir', dir, '--token', `alice=${TOKEN}`])
    defer(() => s.stop('SIGKILL'))
    return s
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
  }
}

/** The good data every case must still serve: two sessions with messages, one with two attachments. */
interface Good {
  session: string
  other: string
  attachment: string
  second: string
}

/** The good data, written once by a real server; each case gets a copy to damage (`seed`). */
let template: { dir: string; good: Good; remove(): Promise<void> } | undefined
afterAll(() => template?.remove())

/** Fills `dir` with the good data: a copy of what a server wrote once for this file. */
async function seed(dir: string): Promise<Good> {
  if (!template) {
    const t = await tempDir('data-dir-seed')
    template = { ...t, good: await write(t.dir) }
  }
  await cp(template.dir, dir, { recursive: true })
  return template.good
}

async function write(dir: string): Promise<Good> {
  const s = await serve(dir)
  const session = 'good'
  const other = 'other \u20ac'
  for (const id of [session, other]) {
    await rpc(s.url, 'session::ensure', { session_id: id }, TOKEN)
    await rpc(s.url, 'session::append', { session_id: id, message: user(`hello ${id}`) }, TOKEN)
    await rpc(s.url, 'session::append', { session_id: id, message: user(`again ${id}`) }, TOKEN)
  }
  const up = async (text: string): Promise<string> => {
    const res = await fetch(`${s.url}/attachments/${session}?name=a.txt&mime=text/plain`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: text,
    })
    expect(res.status).toBe(200)
    return ((await res.json()) as { attachment: { attachment_id: string } }).attachment.attachment_id
  }
  const attachment = await up('the bytes')
  const second = await up('second bytes')
  await s.stop()
  return { session, other, attachment, second }
}

const texts = async (url: string, session_id: string): Promise<string[]> =>
  (await rpc(url, 'session::messages', { session_id }, TOKEN)).messages.map(
    (m: { message: { content: Array<{ text: string }> } }) => m.message.content[0].text,
  )

/** What a restart must still serve (`attachments`: which of the good session's, after the case); and that it writes. */
async function servesGood(url: string, g: Good, attachments: 'all' | 'first' | 'none'): Promise<void> {
  expect(await texts(url, g.other)).toStrictEqual([`hello ${g.other}`, `again ${g.other}`])
  expect(await texts(url, g.session)).toStrictEqual([`hello ${g.session}`, `again ${g.session}`])
  const get = (id: string) => fetch(`${url}/attachments/${g.session}/${enc(id)}`, { headers: auth })
  const first = await get(g.attachment)
  if (attachments === 'none') expect(first.status).toBe(404)
  else expect(await first.text()).toBe('the bytes')
  if (attachments === 'all') expect(await (await get(g.second)).text()).toBe('second bytes')
  // And it writes.
  const { session_id } = await rpc(url, 'session::create', { title: 'after' }, TOKEN)
  const res = await fetch(`${url}/attachments/${enc(session_id)}?name=n.txt`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/octet-stream' },
    body: 'new',
  })
  expect(res.status, await res.clone().text()).toBe(200)
}

/** What no answer may carry: the data directory, temporary or repository paths, a system error code, a stack line. */
const leaks = (text: string, dir: string): string[] =>
  [dir, tmpdir() + '/', 'node_modules', '/work/', 'ENOTDIR', 'EEXIST', 'ENOENT', 'EISDIR']
    .filter((s) => text.includes(s))
    .concat(/\n\s*at /.test(text) ? ['a stack line'] : [])

interface Variant {
  what: string
  plant(dir: string, g: Good): Promise<void>
  attachments: 'all' | 'first' | 'none'
  warns: RegExp
}

const folder = (dir: string, g: Good): string => join(dir, 'attachments', attachmentFolderName(g.session))

/** Bad entries for every place the storage reads on open. */
const BAD: Record<string, Variant[]> = {
  'data directory': [
    {
      what: 'a garbage file, a directory and a dangling link under session file names, a 255-byte legacy name, a stray file',
      async plant(dir) {
        await writeFile(join(dir, sessionFileName('garbage')), 'not json\n\u0000\u0001\u0002{"type":"meta"')
        await mkdir(join(dir, sessionFileName('a directory')))
        await symlink(join(dir, 'nowhere'), join(dir, sessionFileName('dangling')))
        await writeFile(join(dir, 'z'.repeat(249) + '.jsonl'), 'garbage\n')
        await writeFile(join(dir, 'README.txt'), 'left by someone')
      },
      attachments: 'all',
      warns: /no meta record, moved aside/,
    },
  ],
  'session file': [
    {
      what: 'garbage lines and a truncated last line in a session file',
      async plant(dir, g) {
        const path = join(dir, sessionFileName(g.other))
        await appendFile(
          path,
          '{"not a record": true}\n\u0000\u00ff garbage\n{"type":"append","entry":{"id":"torn"',
        )
        await appendFile(join(dir, sessionFileName(g.session)), '[1,2,3]\n')
      },
      attachments: 'all',
      warns: /malformed line|torn/,
    },
  ],
  journal: [
    {
      what: 'garbage lines and a torn last line in the journal',
      async plant(dir) {
        await appendFile(
          join(dir, '.colloquy', 'journal.jsonl'),
          'garbage\n{"tx":"x"}\n{"tx":999,"side":[{"store":"changes","key":"k","value":{"bad":1}}],"v":2}\n{"tx":1000,"si',
        )
      },
      attachments: 'all',
      warns: /journal: (skipping a malformed line|cutting a torn last line)/,
    },
    {
      what: 'a directory in place of the journal',
      async plant(dir) {
        await rename(join(dir, '.colloquy', 'journal.jsonl'), join(dir, 'journal.bak'))
        await mkdir(join(dir, '.colloquy', 'journal.jsonl'))
      },
      attachments: 'all',
      warns: /journal: cannot be read \(EISDIR\); moved aside/,
    },
  ],
  'head index': [
    {
      what: 'garbage lines in the head index',
      async plant(dir) {
        await appendFile(join(dir, '.colloquy', 'heads.jsonl'), 'garbage\n{"sha256":"00"}\n')
      },
      attachments: 'all',
      warns: /head index: its checksum does not match; rebuilt from the session files; moved aside/,
    },
    {
      what: 'a directory in place of the head index',
      async plant(dir) {
        await rm(join(dir, '.colloquy', 'heads.jsonl'))
        await mkdir(join(dir, '.colloquy', 'heads.jsonl'))
      },
      attachments: 'all',
      warns: /head index: it cannot be read \(EISDIR\); rebuilt from the session files; moved aside/,
    },
  ],
  attachments: [
    {
      what: 'a file where the attachments folder is expected',
      async plant(dir) {
        await rename(join(dir, 'attachments'), join(dir, 'attachments.bak'))
        await writeFile(join(dir, 'attachments'), 'a file')
      },
      attachments: 'none',
      warns:
        /attachments: cannot be read \(ENOTDIR\); sessions are served without their attachments; moved aside/,
    },
    {
      what: 'stray entries and a 255-byte name in the attachments folder',
      async plant(dir) {
        await writeFile(join(dir, 'attachments', 'junk.txt'), 'junk')
        await mkdir(join(dir, 'attachments', 'x'.repeat(253) + '.d'))
        await writeFile(join(dir, 'attachments', 'y'.repeat(255)), 'long')
      },
      attachments: 'all',
      warns: /attachments\/junk\.txt: not a name this storage writes/,
    },
  ],
  'attachment folder': [
    {
      what: "a file where a live session's attachment folder is expected",
      async plant(dir, g) {
        await rm(folder(dir, g), { recursive: true })
        await writeFile(folder(dir, g), 'a file')
      },
      attachments: 'none',
      warns: /cannot be read \(ENOTDIR\); the session is served without its attachments; moved aside/,
    },
    {
      what: 'stray entries, a directory named like metadata and an interrupted write in a folder',
      async plant(dir, g) {
        await writeFile(join(folder(dir, g), 'junk'), 'junk')
        await mkdir(join(folder(dir, g), attachmentMetaName('a directory')))
        await writeFile(join(folder(dir, g), `${attachmentMetaName('half')}.tmp-123-4`), '{"half')
      },
      attachments: 'all',
      warns: /skipped, not an attachment's metadata/,
    },
  ],
  'attachment metadata': [
    {
      what: "garbage in one attachment's metadata, and metadata naming another id",
      async plant(dir, g) {
        await writeFile(join(folder(dir, g), attachmentMetaName(g.second)), '{"attachment_id": 5, garbage')
        const meta = JSON.parse(
          await readFile(join(folder(dir, g), attachmentMetaName(g.attachment)), 'utf8'),
        ) as Record<string, unknown>
        await writeFile(
          join(folder(dir, g), attachmentMetaName('elsewhere')),
          JSON.stringify({ ...meta, attachment_id: 'not-elsewhere' }),
        )
      },
      attachments: 'first',
      warns: /skipped, not an attachment's metadata/,
    },
  ],
}

describe('start-up never fails over one bad entry of the data directory', () => {
  it('every place read on open has bad entries planted in it here', () => {
    expect(
      PLACES.filter((p) => p.readOnOpen)
        .map((p) => p.name)
        .sort(),
    ).toStrictEqual(Object.keys(BAD).sort())
  })

  for (const [place, variants] of Object.entries(BAD)) {
    for (const v of variants) {
      it(`${place}: ${v.what}: the server starts, warns in its log, serves the rest, and restarts again`, async () => {
        const dir = await dataDir()
        const g = await seed(dir)
        await v.plant(dir, g)
        const s = await serve(dir)
        await servesGood(s.url, g, v.attachments)
        expect(s.output()).toMatch(/\[colloquy-server\] data directory: /)
        expect(s.output()).toMatch(v.warns)
        await s.stop()
        const again = await serve(dir)
        await servesGood(again.url, g, v.attachments)
      })
    }
  }
})

describe('attachment bytes, read on demand', () => {
  it('a directory or a file cut short in place of bytes answers that attachment as missing (404), never a broken download; the others are served', async () => {
    const dir = await dataDir()
    const g = await seed(dir)
    const sha = async (id: string): Promise<string> =>
      (JSON.parse(await readFile(join(folder(dir, g), attachmentMetaName(id)), 'utf8')) as { sha256: string })
        .sha256
    const first = join(folder(dir, g), `${await sha(g.attachment)}.bin`)
    const second = join(folder(dir, g), `${await sha(g.second)}.bin`)
    await rm(first)
    await mkdir(first)
    await writeFile(second, 'second')
    const s = await serve(dir)
    for (const id of [g.attachment, g.second]) {
      const res = await fetch(`${s.url}/attachments/${g.session}/${enc(id)}`, { headers: auth })
      expect(res.status).toBe(404)
      expect(leaks(await res.text(), dir)).toStrictEqual([])
    }
    // The log reaches this process over the server's stderr, not in order with the answers.
    await expect.poll(() => s.output()).toMatch(/not a file; the attachment is answered as missing/)
    await expect.poll(() => s.output()).toMatch(/6 bytes, 12 expected; the attachment is answered as missing/)
    expect(await texts(s.url, g.session)).toStrictEqual([`hello ${g.session}`, `again ${g.session}`])
    // A new upload of the same content puts the bytes back in place of what was there: both attachments are served again.
    for (const body of ['the bytes', 'second bytes']) {
      const res = await fetch(`${s.url}/attachments/${g.session}?name=again.txt`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        body,
      })
      expect(res.status).toBe(200)
    }
    expect(
      await (await fetch(`${s.url}/attachments/${g.session}/${enc(g.attachment)}`, { headers: auth })).text(),
    ).toBe('the bytes')
    expect(
      await (await fetch(`${s.url}/attachments/${g.session}/${enc(g.second)}`, { headers: auth })).text(),
    ).toBe('second bytes')
  })
})

describe('attachment folders of the percent-encoded layout are migrated on open', () => {
  /** Puts a seeded session's folder back in the layout of earlier versions. */
  async function toLegacy(dir: string, g: Good, step: 'all' | 'folder-only'): Promise<string> {
    const current = folder(dir, g)
    if (step === 'all') {
      for (const name of await readdir(current)) {
        if (!name.endsWith('.json')) continue
        const meta = JSON.parse(await readFile(join(current, name), 'utf8')) as { attachment_id: string }
        await rename(join(current, name), join(current, `${encodeId(meta.attachment_id)}.json`))
      }
    }
    const legacy = join(dir, 'attachments', `${encodeId(g.session)}.d`)
    await rename(current, legacy)
    return legacy
  }

  it('a legacy folder, and one a crash left half migrated, are renamed; a second open finds nothing to do', async () => {
    const dir = await dataDir()
    const g = await seed(dir)
    // The other session gets a folder too, then both go legacy: one whole, one as a crash after its metadata left it.
    const s = await serve(dir)
    const res = await fetch(`${s.url}/attachments/${enc(g.other)}?name=o.txt`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: 'other bytes',
    })
    const other = ((await res.json()) as { attachment: { attachment_id: string } }).attachment.attachment_id
    await s.stop()
    await toLegacy(dir, g, 'all')
    await rename(
      join(dir, 'attachments', attachmentFolderName(g.other)),
      join(dir, 'attachments', `${encodeId(g.other)}.d`),
    )
    const a = await serve(dir)
    await servesGood(a.url, g, 'all')
    expect(
      await (await fetch(`${a.url}/attachments/${enc(g.other)}/${other}`, { headers: auth })).text(),
    ).toBe('other bytes')
    expect((await readdir(join(dir, 'attachments'))).sort()).toEqual(
      expect.arrayContaining([attachmentFolderName(g.session), attachmentFolderName(g.other)]),
    )
    expect(
      (await readdir(join(dir, 'attachments'))).filter((n) => n.includes('%') || n === `${g.session}.d`),
    ).toStrictEqual([])
    await a.stop()
    const b = await serve(dir)
    await servesGood(b.url, g, 'all')
    expect(b.output()).not.toMatch(/migrated|moved aside/)
  })

  it('a legacy folder whose current name is taken already is moved aside, the current one served', async () => {
    const dir = await dataDir()
    const g = await seed(dir)
    const legacy = await toLegacy(dir, g, 'all')
    await mkdir(folder(dir, g))
    await rename(legacy, join(dir, 'attachments', 'tmp'))
    await rm(folder(dir, g), { recursive: true })
    await rename(join(dir, 'attachments', 'tmp'), folder(dir, g))
    // Now both exist: the current folder (holding the data) and a stale legacy copy.
    await mkdir(legacy)
    await writeFile(join(legacy, `${encodeId('stale')}.json`), '{}')
    const s = await serve(dir)
    expect(s.output()).toMatch(/exists already; moved aside/)
    expect(await readdir(join(dir, '.colloquy', 'orphans'))).toContain(
      boundedName(`${encodeId(g.session)}.d`),
    )
  })
})

describe('no error answer carries a server path or a stack trace', () => {
  it('storage failures (a file where the attachments folder goes, a vanished spool directory) answer a generic 5xx with an id; the details are in the log', async () => {
    const dir = await dataDir()
    const g = await seed(dir)
    const s = await serve(dir, { TMPDIR: join(dir, 'no-such-spool') })
    await rm(join(dir, 'attachments'), { recursive: true })
    await writeFile(join(dir, 'attachments'), 'a file')
    const bytes = Buffer.from('hi')
    const answers = [
      await postJson(
        `${s.url}/rpc/session::put-attachment`,
        { session_id: g.other, name: 'x', data: bytes.toString('base64') },
        TOKEN,
      ),
      await fetch(`${s.url}/attachments/${enc(g.other)}?name=x`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        body: bytes,
      }),
    ]
    for (const res of answers) {
      const text = await res.text()
      expect(res.status, text).toBeGreaterThanOrEqual(500)
      expect(leaks(text, dir), text).toStrictEqual([])
      const { error } = JSON.parse(text) as { error: { code: string; message: string; id: string } }
      expect(error.id).toMatch(/^[0-9a-f]{12}$/)
      expect(error.message).toContain(error.id)
      // The log has the details under the same id (stderr is not ordered with the answers).
      await expect
        .poll(() => s.output())
        .toMatch(
          new RegExp(
            `error ${error.id} \\([a-z/_]+\\): [^\\n]*(${dir.replace(/[/.]/g, '\\$&')}|no-such-spool)`,
          ),
        )
    }
    // Reads go on.
    expect(await texts(s.url, g.session)).toStrictEqual([`hello ${g.session}`, `again ${g.session}`])
  })

  it('a mime stored before the mime rule (CR/LF) is served as application/octet-stream, never a 500', async () => {
    const dir = await dataDir()
    const g = await seed(dir)
    const path = join(folder(dir, g), attachmentMetaName(g.attachment))
    const meta = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>
    await writeFile(path, JSON.stringify({ ...meta, mime: 'text/html\r\nSet-Cookie: a=b' }))
    const s = await serve(dir)
    const res = await fetch(`${s.url}/attachments/${g.session}/${g.attachment}`, { headers: auth })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/octet-stream')
    expect(res.headers.get('set-cookie')).toBeNull()
    expect(await res.text()).toBe('the bytes')
    const got = await rpc(
      s.url,
      'session::get-attachment',
      { session_id: g.session, attachment_id: g.attachment, include_data: false },
      TOKEN,
    )
    expect(got.attachment.mime).toBe('application/octet-stream')
  })
})
