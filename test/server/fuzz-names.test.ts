import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { isValidMime, isWellFormed } from '@colloquy/core/wire'
import { afterEach, describe, expect, it } from 'vitest'
import { httpTransport } from '../../packages/sync/src/index.js'
import {
  currentDataBackend,
  postJson,
  pullAll,
  rpc,
  startServer,
  type KeptData,
  type ServerProcess,
} from './helpers.js'

/**
 * Names, mimes and quotas against a real `colloquy-server` on kept data (its file storage here;
 * test/postgres/fuzz-names.test.ts runs the same on PostgreSQL), as two principals would attack it:
 *
 * - every id the protocol accepts, however long or odd (255 × `b`, 85 × `€`, case and
 *   normalization twins, `..`, reserved names), as a session and as an attachment, by upload,
 *   by sync and by RPC, with mimes and names of every shape: answered 200 or 4xx, never 5xx; a bad one
 *   writes nothing; the server restarts on the data and serves every acknowledged attachment;
 * - no answer carries a server path or a stack trace;
 * - a declared `Content-Length` past the remaining quota is refused before the body is read.
 */
const BACKEND = currentDataBackend()
const RUNS = Number(process.env.COLLOQUY_FUZZ_RUNS ?? Math.max(1, Math.round(BACKEND.runs / 4)))
const ALICE = 'tok-alice'
const BOB = 'tok-bob'
const REPO = join(import.meta.dirname, '..', '..')

const kept: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const k of kept.splice(0).reverse()) await k()
})
async function data(): Promise<KeptData> {
  const d = await BACKEND.data()
  kept.push(() => d.remove())
  return d
}
async function serve(d: KeptData, ...args: string[]): Promise<ServerProcess> {
  const s = await startServer([...d.args, '--token', `alice=${ALICE}`, '--token', `bob=${BOB}`, ...args])
  kept.push(() => s.stop('SIGKILL'))
  return s
}

/** What no answer may carry: a path of this machine, a module path, a stack line. */
function leaks(text: string, dataArgs: readonly string[]): string[] {
  const found: string[] = []
  for (const arg of dataArgs)
    if (arg.startsWith('/') && text.includes(arg)) found.push(`the data directory ${arg}`)
  if (text.includes(REPO)) found.push('the repository path')
  if (text.includes(tmpdir() + '/')) found.push('the temporary directory')
  if (text.includes('node_modules')) found.push('node_modules')
  if (/(^|\\n|\n)\s*at \S/.test(text)) found.push('a stack line')
  if (/(^|[\s"'(:])\/(home|tmp|work|usr|var|etc|root|opt|proc)\//.test(text)) found.push('an absolute path')
  if (/ENAMETOOLONG|ENOTDIR|EISDIR|EACCES|EEXIST/.test(text)) found.push('a system error code')
  return found
}

/** Ids that file systems and encodings fold or limit: valid, so they must work as any other. */
const ID_FAMILIES: readonly string[] = [
  'b'.repeat(255),
  'B'.repeat(255),
  '\u20ac'.repeat(85),
  '\u00e9'.repeat(127),
  '\u{1f600}'.repeat(63),
  'a'.repeat(249) + '.jsonl',
  'Chat-A',
  'chat-a',
  '\u00e9t\u00e9',
  'e\u0301te\u0301',
  '..',
  '.',
  '../escape',
  'a/b\\c',
  'CON',
  'aux.json',
  'x.d',
  '%41',
  'A',
  'trailing. ',
  'nul\u0000byte',
  'line\nbreak',
]
const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ID_FAMILIES) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 60 })
      .filter((s) => Buffer.byteLength(s) <= 255 && isWellFormed(s)),
  },
)
const MIMES: readonly string[] = [
  'image/png',
  'text/plain; charset=utf-8',
  'application/vnd.api+json',
  'application/octet-stream',
  'image/png\r\nX-Injected: 1',
  'text/html\n',
  'image/png\u0000',
  'image/*',
  'image',
  'text/plain\u007f',
  'a/' + 'b'.repeat(300),
  'ïmage/png',
  ' image/png',
  'text/plain; charset',
  '',
]
/** Attachment names: blank, too long, with line breaks, paths and reserved names (only the first two are refused). */
const NAMES: readonly string[] = [
  'f.bin',
  '',
  '  ',
  'a\r\nb.txt',
  '../../etc/passwd',
  'x'.repeat(255),
  'x'.repeat(256),
  '\u20ac'.repeat(85),
  '\u20ac'.repeat(86),
  'CON',
  'nul\u0000.bin',
  '"; filename=evil.html',
]
const nameOk = (n: string): boolean => n.trim() !== '' && Buffer.byteLength(n) <= 255
const mimeArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...MIMES) },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.constantFrom(...'ab/;=" \t\r\n\u0000\u007f\u00e9*+-.x'.split('')),
      maxLength: 30,
    }),
  },
)

type Way = 'upload' | 'sync' | 'rpc'
interface Step {
  session: string
  attachment: string
  mime: string
  name: string
  way: Way
  content: string
}
/** `.` and `..` are dot segments of a URL path, never a route's parameter: those go by RPC. */
const addressable = (id: string): boolean => id !== '.' && id !== '..'
const stepArb: fc.Arbitrary<Step> = fc
  .record({
    session: idArb,
    attachment: idArb,
    mime: mimeArb,
    name: fc.constantFrom(...NAMES),
    way: fc.constantFrom<Way>('upload', 'sync', 'rpc'),
    content: fc.string({ maxLength: 40 }),
  })
  .map((s) => (addressable(s.session) && addressable(s.attachment) ? s : { ...s, way: 'rpc' as const }))

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
const auth = (token: string) => ({ authorization: `Bearer ${token}` })
const enc = encodeURIComponent

/** One attachment written one of the three ways; the answer's status and body text. */
async function put(
  url: string,
  s: Step,
  token: string,
): Promise<{ status: number; text: string; attachment_id?: string }> {
  const bytes = Buffer.from(s.content || 'x')
  let res: Response
  if (s.way === 'upload') {
    res = await fetch(`${url}/attachments/${enc(s.session)}?name=${enc(s.name)}&mime=${enc(s.mime)}`, {
      method: 'POST',
      headers: { ...auth(token), 'content-type': 'application/octet-stream' },
      body: bytes,
    })
  } else if (s.way === 'sync') {
    const q = `name=${enc(s.name)}&mime=${enc(s.mime)}&size=${bytes.length}&sha256=${sha(bytes)}&created_at=1`
    res = await fetch(`${url}/sync/attachments/${enc(s.session)}/${enc(s.attachment)}?${q}`, {
      method: 'POST',
      headers: { ...auth(token), 'content-type': 'application/octet-stream' },
      body: bytes,
    })
  } else {
    res = await postJson(
      `${url}/rpc/session::put-attachment`,
      { session_id: s.session, name: s.name, mime: s.mime, data: bytes.toString('base64') },
      token,
    )
  }
  const text = await res.text()
  if (res.status !== 200) return { status: res.status, text }
  const body = JSON.parse(text) as { attachment?: { attachment_id: string }; status?: string }
  return {
    status: 200,
    text,
    attachment_id: s.way === 'sync' ? s.attachment : body.attachment!.attachment_id,
  }
}

describe(`names and mimes of every shape, on ${BACKEND.name}`, () => {
  it('every valid id works as a session and an attachment, a bad mime or name writes nothing, nothing is a 5xx or leaks a path, and the server restarts on the data', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 6, maxLength: 14 }), async (steps) => {
        const d = await data()
        let server = await serve(d)
        const held = new Map<
          string,
          { session: string; attachment_id: string; content: string; mime: string }
        >()
        const sessions = new Set<string>()
        try {
          for (const s of steps) {
            if (!sessions.has(s.session)) {
              const ensured = await postJson(
                `${server.url}/rpc/session::ensure`,
                { session_id: s.session },
                ALICE,
              )
              const text = await ensured.text()
              expect(leaks(text, d.args), text).toStrictEqual([])
              if (ensured.status !== 200) {
                // Only an id the validator refuses (NUL is allowed; none of these is too long).
                expect(ensured.status, text).toBeLessThan(500)
                continue
              }
              sessions.add(s.session)
            }
            const before = (
              await rpc(server.url, 'session::list-attachments', { session_id: s.session }, ALICE)
            ).attachments.length
            const r = await put(server.url, s, ALICE)
            expect(r.status, r.text).toBeLessThan(500)
            expect(leaks(r.text, d.args), r.text).toStrictEqual([])
            const valid = (s.mime.trim() === '' || isValidMime(s.mime)) && nameOk(s.name)
            if (!valid) {
              expect(
                r.status,
                `${s.way} ${JSON.stringify(s.mime)} ${JSON.stringify(s.name).slice(0, 40)}`,
              ).toBe(400)
              expect(JSON.parse(r.text).error.code).toBe('session/invalid_request')
              expect(
                (await rpc(server.url, 'session::list-attachments', { session_id: s.session }, ALICE))
                  .attachments.length,
              ).toBe(before)
            } else if (r.status === 200) {
              const mime = s.mime.trim() === '' ? 'application/octet-stream' : s.mime
              held.set(`${s.session}\u0000${r.attachment_id}`, {
                session: s.session,
                attachment_id: r.attachment_id!,
                content: s.content || 'x',
                mime,
              })
            } else {
              // A sync of an id already held with other bytes, the only refusal of a valid request here.
              expect([400, 409], r.text).toContain(r.status)
            }
            // Bob never sees Alice's attachment, and is answered as for an unknown session.
            const peek = await fetch(
              `${server.url}/attachments/${enc(s.session)}/${enc(r.attachment_id ?? 'a')}`,
              { headers: auth(BOB) },
            )
            expect(peek.status).toBe(404)
            expect(leaks(await peek.text(), d.args)).toStrictEqual([])
          }
          await server.stop('SIGKILL')
          server = await serve(d)
          for (const a of held.values()) {
            const got = await rpc(
              server.url,
              'session::get-attachment',
              { session_id: a.session, attachment_id: a.attachment_id },
              ALICE,
            )
            expect(
              Buffer.from(got.data, 'base64').toString(),
              `${JSON.stringify(a.session).slice(0, 40)} ${server.output().slice(-2000)}`,
            ).toBe(a.content)
            expect(got.attachment.mime).toBe(a.mime)
            if (!addressable(a.session) || !addressable(a.attachment_id)) continue
            const res = await fetch(`${server.url}/attachments/${enc(a.session)}/${enc(a.attachment_id)}`, {
              headers: auth(ALICE),
            })
            expect(res.status).toBe(200)
            expect(await res.text()).toBe(a.content)
            expect(res.headers.get('content-type')).toBe(a.mime)
          }
          // Every session still lists, and the other principal still writes.
          expect((await pullAll(server.url, 0, undefined, ALICE)).changes.length).toBeGreaterThan(0)
          const { session_id } = await rpc(server.url, 'session::create', {}, BOB)
          expect(
            (
              await put(
                server.url,
                {
                  session: session_id,
                  attachment: 'a',
                  mime: 'text/plain',
                  name: 'b.txt',
                  way: 'upload',
                  content: 'bob',
                },
                BOB,
              )
            ).status,
          ).toBe(200)
        } finally {
          await server.stop('SIGKILL')
        }
      }),
      {
        numRuns: RUNS,
        seed:
          process.env.COLLOQUY_FUZZ_SEED === undefined ? undefined : Number(process.env.COLLOQUY_FUZZ_SEED),
      },
    )
  })

  it('the findings of issue 24: a 255 × b session and 85 × € uploads and synced ids are served, and a restart serves them again', async () => {
    const d = await data()
    let server = await serve(d)
    const { session_id: first } = await rpc(server.url, 'session::create', { title: 'alice' }, ALICE)
    expect(
      (
        await put(
          server.url,
          {
            session: first,
            attachment: '',
            mime: 'text/plain',
            name: 'f.bin',
            way: 'upload',
            content: 'one',
          },
          ALICE,
        )
      ).status,
    ).toBe(200)
    const long = 'b'.repeat(255)
    const euro = '\u20ac'.repeat(85)
    await rpc(server.url, 'session::ensure', { session_id: long }, BOB)
    await rpc(server.url, 'session::ensure', { session_id: euro }, BOB)
    const answers = [
      await put(
        server.url,
        { session: long, attachment: '', mime: 'image/png', name: 'f.bin', way: 'upload', content: 'long' },
        BOB,
      ),
      await put(
        server.url,
        { session: euro, attachment: '', mime: 'image/png', name: 'f.bin', way: 'upload', content: 'euro' },
        BOB,
      ),
      await put(
        server.url,
        { session: euro, attachment: euro, mime: 'image/png', name: 'f.bin', way: 'sync', content: 'synced' },
        BOB,
      ),
    ]
    for (const a of answers) {
      expect(a.status, a.text).toBe(200)
      expect(leaks(a.text, d.args)).toStrictEqual([])
    }
    await server.stop()
    server = await serve(d)
    const read = async (s: string, a: string, token: string) =>
      (await fetch(`${server.url}/attachments/${enc(s)}/${enc(a)}`, { headers: auth(token) })).text()
    expect(await read(long, answers[0].attachment_id!, BOB)).toBe('long')
    expect(await read(euro, answers[1].attachment_id!, BOB)).toBe('euro')
    expect(await read(euro, euro, BOB)).toBe('synced')
    const [mine] = (await rpc(server.url, 'session::list-attachments', { session_id: first }, ALICE))
      .attachments
    expect(await read(first, mine.attachment_id, ALICE)).toBe('one')
  })
})

describe(`a sync client's attachment whose type was stored before the mime rule, on ${BACKEND.name}`, () => {
  it('goes up as application/octet-stream instead of being refused for ever', async () => {
    const d = await data()
    const server = await serve(d)
    const { session_id } = await rpc(server.url, 'session::create', {}, ALICE)
    const bytes = Buffer.from('old bytes')
    const meta = {
      attachment_id: 'a_old',
      session_id,
      name: 'old.html',
      mime: 'text/html\r\nSet-Cookie: a=b',
      size: bytes.length,
      sha256: sha(bytes),
      created_at: 1,
    }
    await httpTransport({ url: server.url, token: ALICE }).uploadAttachment!(
      session_id,
      meta,
      new Blob([bytes]),
    )
    const res = await fetch(`${server.url}/attachments/${enc(session_id)}/a_old`, { headers: auth(ALICE) })
    expect(res.headers.get('content-type')).toBe('application/octet-stream')
    expect(await res.text()).toBe('old bytes')
  })
})

describe(`quotas hold before and while a body is read, on ${BACKEND.name}`, () => {
  /**
   * Sends headers declaring `declared` bytes and then `sent` bytes, holding the request open:
   * resolves with the answer as soon as it comes, and how many bytes had been sent by then.
   */
  function holdOpen(
    url: string,
    path: string,
    headers: Record<string, string>,
    sent: number,
    end = false,
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const u = new URL(path, url)
      const req = request(
        { host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', headers },
        (res) => {
          let body = ''
          res.on('data', (c: Buffer) => (body += c.toString()))
          res.on('end', () => {
            resolve({ status: res.statusCode!, body })
            req.destroy()
          })
        },
      )
      req.on('error', reject)
      // Sent in 64 KiB writes; unless `end`, never ended: a declared length is never reached,
      // so only an answer given before the body can settle this.
      for (let at = 0; at < sent; at += 65_536) req.write(Buffer.alloc(Math.min(65_536, sent - at), 1))
      if (end) req.end()
    })
  }

  it('a declared Content-Length past the quota is refused before the body is read, nothing spooled; an undeclared or false length is cut off at the quota', async () => {
    const spool = await mkdtemp(join(tmpdir(), 'colloquy-spool-'))
    kept.push(() => rm(spool, { recursive: true, force: true }))
    const d = await data()
    // The server's spool goes to its temporary directory: this one, watched.
    const was = process.env.TMPDIR
    process.env.TMPDIR = spool
    let server: ServerProcess
    try {
      server = await serve(d, '--max-stored-bytes', String(3_000_000))
    } finally {
      if (was === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = was
    }
    const { session_id } = await rpc(server.url, 'session::create', {}, ALICE)
    const headers = {
      ...auth(ALICE),
      'content-type': 'application/octet-stream',
      'content-length': String(40 << 20),
    }
    const upload = await holdOpen(
      server.url,
      `/attachments/${enc(session_id)}?name=big.bin`,
      headers,
      64 * 1024,
    )
    // The request never reaches its declared length: only an answer given before the body settles it.
    expect(upload.status, upload.body).toBe(403)
    expect(JSON.parse(upload.body).error.message).toMatch(/quota/)
    const big = Buffer.alloc(40 << 20)
    const q = `name=big.bin&size=${big.length}&sha256=${'0'.repeat(64)}&created_at=1`
    const synced = await holdOpen(
      server.url,
      `/sync/attachments/${enc(session_id)}/a_big?${q}`,
      headers,
      64 * 1024,
    )
    expect(synced.status, synced.body).toBe(403)
    // The RPC's base64 form too: its declared length is past the room, refused before it is read.
    const viaRpc = await holdOpen(
      server.url,
      '/rpc/session::put-attachment',
      { ...auth(ALICE), 'content-type': 'application/json', 'content-length': String(4_000_000) },
      64 * 1024,
    )
    expect(viaRpc.status, viaRpc.body).toBe(403)
    expect(JSON.parse(viaRpc.body).error.message).toMatch(/quota/)
    // Not even a spool folder was made for them.
    expect(await readdir(spool)).toStrictEqual([])

    // Chunked (no Content-Length): read up to the quota's room, then cut off with 403, the spool removed.
    const chunked = await holdOpen(
      server.url,
      `/attachments/${enc(session_id)}?name=big.bin`,
      { ...auth(ALICE), 'content-type': 'application/octet-stream' },
      4 << 20,
      true,
    )
    expect(chunked.status, chunked.body).toBe(403)
    expect(JSON.parse(chunked.body).error.message).toMatch(/quota/)
    // A Content-Length that lies low is cut off by Node's parser; one within the quota whose body runs past it cannot be sent.
    expect(
      (await rpc(server.url, 'session::list-attachments', { session_id }, ALICE)).attachments,
    ).toStrictEqual([])
    expect(await readdir(spool)).toStrictEqual([])
    // Within the quota, uploads still work.
    const ok = await fetch(`${server.url}/attachments/${enc(session_id)}?name=ok.bin`, {
      method: 'POST',
      headers: { ...auth(ALICE), 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(1_000_000),
    })
    expect(ok.status, await ok.clone().text()).toBe(200)
    expect(await readdir(spool)).toStrictEqual([])
  })
})
