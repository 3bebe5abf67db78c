import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { WebSocket } from '../../packages/server/test/ws.js'
import { currentDataBackend, startServer, type ServerProcess } from './helpers.js'

/**
 * Fuzzing a real `colloquy-server` process on its file storage, as two principals with valid
 * tokens would attack it: random sequences of valid and hostile requests (ids of every shape and
 * length, deep and huge bodies, pushes with forged owners, pulls with odd cursors, malformed and
 * oversized WebSocket frames) with SIGTERM / SIGKILL restarts in between. After every step:
 *
 * - no-5xx: no response and no WebSocket error frame is a server failure;
 * - isolation: nothing sent to one principal (bodies, stream and event frames) carries a marker
 *   planted in the other's writes, and no write of one principal lands in the other's sessions;
 * - availability: the other principal can still write (and the server restarts on its data);
 * - durability: after every restart, every acknowledged write is there, as it was acknowledged.
 *
 * Budget: COLLOQUY_FUZZ_RUNS runs (default 12 on files, 4 on PostgreSQL) of up to COLLOQUY_FUZZ_STEPS steps (default 40).
 * A failure prints the seed and path; replay with COLLOQUY_FUZZ_SEED and COLLOQUY_FUZZ_PATH
 * (COLLOQUY_FUZZ_SHRINK=1 to shrink it first). See packages/server/README.md, "Fuzzing".
 */
const BACKEND = currentDataBackend()
const RUNS = Number(process.env.COLLOQUY_FUZZ_RUNS ?? BACKEND.runs)
const STEPS = Number(process.env.COLLOQUY_FUZZ_STEPS ?? 40)
const SEED =
  process.env.COLLOQUY_FUZZ_SEED === undefined
    ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0
    : Number(process.env.COLLOQUY_FUZZ_SEED)
const PATH = process.env.COLLOQUY_FUZZ_PATH
const SHRINK = process.env.COLLOQUY_FUZZ_SHRINK === '1'
const MAX_BODY = 256 * 1024

type Who = 'alice' | 'bob'
const WHO: readonly Who[] = ['alice', 'bob']
const TOKEN: Record<Who, string> = { alice: 'tok-alice', bob: 'tok-bob' }
const other = (w: Who): Who => (w === 'alice' ? 'bob' : 'alice')
const MARK: Record<Who, string> = { alice: 'ALICE-SECRET-', bob: 'BOB-SECRET-' }

/** Ids that file systems and encodings tend to fold together, drawn from by both principals. */
const FAMILIES: readonly (readonly string[])[] = [
  ['q\ud800', 'q\ufffd', 'q\udfff', 'q\udc00'],
  ['Chat-A', 'chat-a', 'CHAT-A'],
  ['\u00e9t\u00e9', 'e\u0301te\u0301', '\u212b', '\u00c5'],
  ['../escape/chat 42:?', '..%2Fescape%2Fchat%2042%3A%3F', '..\\escape', '/etc/passwd'],
  ['CON', 'con', 'con.txt', 'NUL', 'COM1', 'aux.jsonl', 'LPT9'],
  ['.', '..', '...', '.colloquy', 'trailing.', 'trailing ', ' '],
  ['a'.repeat(255), 'a'.repeat(256), 'A'.repeat(255), 'a'.repeat(251) + '.jsonl'],
  ['\u00e9'.repeat(128), '\u00e9'.repeat(127), '\u{1f600}'.repeat(64)],
  ['x'.repeat(3000), 'X'.repeat(3000)],
  ['%41', 'A', '%2e%2e', 'nul\u0000byte', 'line\nbreak'],
]

const idArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...FAMILIES).chain((f) => fc.constantFrom(...f)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => `s${String.fromCharCode(c)}`) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 5000 }).map((n) => 'L'.repeat(n)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }) },
)

/** A session to act on: one of the actor's own (by index), one of the other's, or any id. */
type Target = { pool: 'own' | 'other' | 'any'; pick: number; id: string }
const targetArb: fc.Arbitrary<Target> = fc.record({
  pool: fc.constantFrom('own', 'own', 'other', 'any'),
  pick: fc.nat(),
  id: idArb,
})

type Mutation =
  | { type: 'create'; id: string; forged: boolean }
  | { type: 'entry'; target: Target; entry_id: string }
  | { type: 'edit'; target: Target }
  | { type: 'leaf'; target: Target; entry_id: string }
  | { type: 'delete'; target: Target }
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ type: fc.constant('create' as const), id: idArb, forged: fc.boolean() }),
  fc.record({ type: fc.constant('entry' as const), target: targetArb, entry_id: idArb }),
  fc.record({ type: fc.constant('edit' as const), target: targetArb }),
  fc.record({ type: fc.constant('leaf' as const), target: targetArb, entry_id: idArb }),
  fc.record({ type: fc.constant('delete' as const), target: targetArb }),
)

type Hostile =
  | { shape: 'deep'; depth: number }
  | { shape: 'wide'; n: number }
  | { shape: 'keys'; n: number }
  | { shape: 'long-string'; n: number }
  | { shape: 'oversize' }
  | { shape: 'raw'; text: string }
  | { shape: 'text-plain' }
const hostileArb: fc.Arbitrary<Hostile> = fc.oneof(
  fc.record({ shape: fc.constant('deep' as const), depth: fc.constantFrom(65, 1000, 20_000, 100_000) }),
  fc.record({ shape: fc.constant('wide' as const), n: fc.constantFrom(1000, 100_001) }),
  fc.record({ shape: fc.constant('keys' as const), n: fc.constantFrom(500, 10_001) }),
  fc.record({ shape: fc.constant('long-string' as const), n: fc.constantFrom(100_000, 1024 * 1024 + 1) }),
  fc.constant({ shape: 'oversize' as const }),
  fc.record({
    shape: fc.constant('raw' as const),
    text: fc.constantFrom(
      '',
      '{',
      '[1,]',
      'null',
      '[]',
      '"x"',
      '1e309',
      '{"session_id":1}',
      '{"__proto__":{"x":1}}',
      '\ud800',
      '{"a":"\\ud800"}',
    ),
  }),
  fc.constant({ shape: 'text-plain' as const }),
)
const endpointArb = fc.constantFrom(
  '/rpc/session::create',
  '/rpc/session::ensure',
  '/rpc/session::append',
  '/rpc/session::list',
  '/rpc/session::set-meta',
  '/rpc/session::nope',
  '/sync/push',
)

type Frame =
  | { kind: 'garbage'; text: string }
  | { kind: 'binary' }
  | { kind: 'oversize' }
  | { kind: 'deep'; depth: number }
  | { kind: 'push'; mutations: Mutation[] }
  | { kind: 'subscribe-other' }
const frameArb: fc.Arbitrary<Frame> = fc.oneof(
  fc.record({
    kind: fc.constant('garbage' as const),
    text: fc.constantFrom(
      '',
      'nope',
      '{',
      '[]',
      'null',
      '{"type":"push"}',
      '{"type":"push","mutations":7}',
      '{"type":1}',
    ),
  }),
  fc.constant({ kind: 'binary' as const }),
  fc.constant({ kind: 'oversize' as const }),
  fc.record({ kind: fc.constant('deep' as const), depth: fc.constantFrom(100, 100_000) }),
  fc.record({
    kind: fc.constant('push' as const),
    mutations: fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
  }),
  fc.constant({ kind: 'subscribe-other' as const }),
)

type Action =
  | { kind: 'ensure'; who: Who; id: string }
  | { kind: 'append'; who: Who; target: Target; entry_id: string | null }
  | { kind: 'update'; who: Who; pick: number }
  | {
      kind: 'write'
      who: Who
      fn: 'append-many' | 'fork' | 'set-active-leaf' | 'set-meta' | 'set-status'
      target: Target
      id: string
      pick: number
    }
  | { kind: 'delete'; who: Who; target: Target }
  | { kind: 'read'; who: Who; fn: 'get' | 'messages' | 'list' | 'history' | 'get-message'; target: Target }
  | { kind: 'pull'; who: Who; since: string; limit: string | null }
  | { kind: 'push'; who: Who; mutations: Mutation[] }
  | { kind: 'hostile'; who: Who; endpoint: string; body: Hostile }
  | { kind: 'ws'; who: Who; frame: Frame }
  | { kind: 'restart'; signal: 'SIGTERM' | 'SIGKILL' }

const whoArb = fc.constantFrom<Who>(...WHO)
const oddNumber = fc.constantFrom(
  '-1',
  '0',
  '1',
  '1.5',
  '1e3',
  '9007199254740993',
  '99999999999999999999',
  'abc',
  '',
  '%00',
  '0x10',
  ' 1',
  '-0',
  'NaN',
  'Infinity',
)
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('ensure' as const), who: whoArb, id: idArb }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      who: whoArb,
      target: targetArb,
      entry_id: fc.option(idArb),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('update' as const), who: whoArb, pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('write' as const),
      who: whoArb,
      fn: fc.constantFrom(
        'append-many' as const,
        'fork' as const,
        'set-active-leaf' as const,
        'set-meta' as const,
        'set-status' as const,
      ),
      target: targetArb,
      id: idArb,
      pick: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('delete' as const), who: whoArb, target: targetArb }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      who: whoArb,
      fn: fc.constantFrom(
        'get' as const,
        'messages' as const,
        'list' as const,
        'history' as const,
        'get-message' as const,
      ),
      target: targetArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('pull' as const),
      who: whoArb,
      since: oddNumber,
      limit: fc.option(oddNumber),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('push' as const),
      who: whoArb,
      mutations: fc.array(mutationArb, { minLength: 1, maxLength: 5 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('hostile' as const),
      who: whoArb,
      endpoint: endpointArb,
      body: hostileArb,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('ws' as const), who: whoArb, frame: frameArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('restart' as const),
      signal: fc.constantFrom('SIGTERM' as const, 'SIGKILL' as const),
    }),
  },
)

/** A broken invariant, named so a failure says which one caught it. */
class Violation extends Error {
  constructor(invariant: string, detail: string) {
    super(`[${invariant}] ${detail}`)
    this.name = 'Violation'
  }
}

const show = (s: string): string =>
  s.length > 80 ? `${JSON.stringify(s.slice(0, 40))}…(${s.length} chars)` : JSON.stringify(s)
const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})
const meta = (session_id: string, title: string, metadata: Record<string, unknown> = {}) => ({
  session_id,
  title,
  description: '',
  status: 'idle',
  kind: 'user',
  created_at: 1000,
  updated_at: 1000,
  message_count: 0,
  metadata,
})
function nest(depth: number, inner: string): string {
  return '['.repeat(depth - 1) + inner + ']'.repeat(depth - 1)
}

/** One fuzz run: a fresh data directory, a server process, the two principals and what they were promised. */
class Run {
  server!: ServerProcess
  private marks = 0
  /** Acknowledged state per principal: session → entry → its text. */
  readonly model: Record<Who, Map<string, Map<string, string>>> = { alice: new Map(), bob: new Map() }
  private sockets: Array<{ ws: InstanceType<typeof WebSocket>; who: Who; frames: string[] }> = []
  private pending: Violation[] = []
  readonly log: string[] = []

  /** `storage`: the server's storage options, the same data on every restart. */
  constructor(readonly storage: readonly string[]) {}

  mark(who: Who): string {
    return `${MARK[who]}${++this.marks}`
  }

  async start(): Promise<void> {
    try {
      this.server = await startServer([
        ...this.storage,
        '--token',
        `alice=${TOKEN.alice}`,
        '--token',
        `bob=${TOKEN.bob}`,
        '--no-fsync',
        '--max-body-bytes',
        String(MAX_BODY),
        '--requests-per-second',
        '0',
      ])
    } catch (e) {
      throw new Violation(
        'availability',
        `the server does not start on its data: ${(e as Error).message.slice(0, 2000)}`,
      )
    }
    for (const who of WHO) {
      await this.openSocket(who, '/sync/stream?since=0')
      const events = await this.openSocket(who, '/events')
      events.send(
        JSON.stringify({ type: 'subscribe', id: 's', trigger_type: 'session::message-added', config: {} }),
      )
    }
  }

  async stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    for (const s of this.sockets) s.ws.terminate()
    this.sockets = []
    await this.server.stop(signal)
  }

  private async openSocket(who: Who, path: string): Promise<InstanceType<typeof WebSocket>> {
    const ws = new WebSocket(`${this.server.url.replace(/^http/, 'ws')}${path}`, {
      headers: { authorization: `Bearer ${TOKEN[who]}` },
    })
    const entry = { ws, who, frames: [] as string[] }
    ws.on('message', (data) => {
      const text = data.toString()
      entry.frames.push(text)
      const leak = this.leak(who, `frame on ${path}`, text)
      if (leak) this.pending.push(leak)
      if (/"type":"error"/.test(text) && /"code":"(session\/storage|server\/internal)"/.test(text))
        this.pending.push(new Violation('no-5xx', `${who} got ${text.slice(0, 300)} on ${path}`))
    })
    ws.on('error', () => {})
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('unexpected-response', (_q, res) =>
        reject(new Violation('availability', `${who}'s WebSocket ${path} refused: HTTP ${res.statusCode}`)),
      )
    })
    this.sockets.push(entry)
    return ws
  }

  /** A foreign marker in anything sent to `who` is a cross-tenant leak. */
  private leak(who: Who, what: string, text: string): Violation | undefined {
    const at = text.indexOf(MARK[other(who)])
    return at < 0
      ? undefined
      : new Violation(
          'isolation',
          `${who} received ${other(who)}'s data in ${what}: …${text.slice(Math.max(0, at - 200), at + 60)}…`,
        )
  }

  /** Throws what the sockets saw since the last check. */
  flush(): void {
    const v = this.pending.shift()
    if (v) throw v
  }

  async http(
    who: Who,
    method: 'GET' | 'POST',
    path: string,
    body?: string,
    contentType = 'application/json',
  ): Promise<{ status: number; text: string; json: any }> {
    let res: Response
    try {
      res = await fetch(`${this.server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${TOKEN[who]}`,
          ...(body !== undefined && { 'content-type': contentType }),
        },
        body,
        signal: AbortSignal.timeout(20_000),
      })
    } catch (e) {
      // A refused oversized body may be cut off while it is still being sent.
      if (body !== undefined && Buffer.byteLength(body) > MAX_BODY)
        return { status: 413, text: '', json: undefined }
      throw new Violation(
        'availability',
        `${who} ${method} ${show(path)}: ${(e as Error).message}; server output:\n${this.server.output().slice(-2000)}`,
      )
    }
    const text = await res.text()
    if (res.status >= 500)
      throw new Violation(
        'no-5xx',
        `${who} ${method} ${show(path)} ${body === undefined ? '' : show(body)} → ${res.status} ${text.slice(0, 300)}`,
      )
    const leak = this.leak(who, `${method} ${show(path)} ${body === undefined ? '' : show(body)}`, text)
    if (leak) throw leak
    let json: any
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: res.status, text, json }
  }

  rpc(who: Who, fn: string, req: unknown) {
    return this.http(who, 'POST', `/rpc/session::${fn}`, JSON.stringify(req))
  }

  resolve(who: Who, t: Target): string {
    const pool = t.pool === 'any' ? [] : [...this.model[t.pool === 'own' ? who : other(who)].keys()]
    return pool.length ? pool[t.pick % pool.length] : t.id
  }

  /** Availability: `who` can still write, into its own canary session. */
  async canary(who: Who): Promise<void> {
    const session_id = `canary-${who}`
    if (!this.model[who].has(session_id)) {
      const r = await this.rpc(who, 'ensure', { session_id, title: this.mark(who) })
      if (r.status !== 200)
        throw new Violation(
          'availability',
          `${who} cannot ensure its canary: ${r.status} ${r.text.slice(0, 300)}`,
        )
      this.model[who].set(session_id, new Map())
    }
    const text = this.mark(who)
    const r = await this.rpc(who, 'append', { session_id, message: user(text) })
    if (r.status !== 200)
      throw new Violation('availability', `${who} can no longer write: ${r.status} ${r.text.slice(0, 300)}`)
    this.model[who].get(session_id)!.set(r.json.entry_id, text)
  }

  /** Durability and isolation at rest: every acknowledged session and entry is there, as acknowledged, and its owner's. */
  async verify(): Promise<void> {
    // Everything is read first: a leak found on the way is reported before a loss.
    const lost: Violation[] = []
    for (const who of WHO) {
      for (const [session_id, entries] of this.model[who]) {
        const got = await this.rpc(who, 'get', { session_id })
        if (got.json?.meta?.metadata?.owner !== who)
          lost.push(
            new Violation(
              'durability',
              `${who}'s acknowledged session ${show(session_id)} is ${got.text.slice(0, 300)} after restart`,
            ),
          )
        for (const [entry_id, text] of entries) {
          const m = await this.rpc(who, 'get-message', { session_id, entry_id })
          const content = JSON.stringify(m.json?.entry ?? null)
          if (!content.includes(JSON.stringify(text)))
            lost.push(
              new Violation(
                'durability',
                `${who}'s acknowledged entry ${show(entry_id)} of ${show(session_id)} is ${m.text.slice(0, 300)} after restart (expected ${text})`,
              ),
            )
        }
        await this.rpc(who, 'messages', { session_id })
      }
      await this.http(who, 'GET', '/sync/pull?since=0&limit=5000')
    }
    this.flush()
    if (lost.length) throw lost[0]
  }

  private pushBody(
    who: Who,
    mutations: readonly Mutation[],
  ): { body: { mutations: unknown[] }; plan: Array<(r: any) => void> } {
    const plan: Array<(r: any) => void> = []
    const out: unknown[] = []
    for (const m of mutations) {
      const id = out.length + 1
      switch (m.type) {
        case 'create': {
          const title = this.mark(who)
          out.push({
            id,
            change: {
              type: 'meta',
              create: true,
              meta: meta(m.id, title, m.forged ? { owner: other(who) } : {}),
            },
          })
          plan.push((r) => {
            if (r?.status !== 'applied' && r?.status !== 'unchanged') return
            if (m.forged)
              throw new Violation(
                'isolation',
                `${who} created ${show(m.id)} owned by ${other(who)}: ${JSON.stringify(r)}`,
              )
            if (this.model[other(who)].has(m.id))
              throw new Violation(
                'isolation',
                `${who}'s push took over ${other(who)}'s session ${show(m.id)}`,
              )
            if (!this.model[who].has(m.id)) this.model[who].set(m.id, new Map())
          })
          break
        }
        case 'entry': {
          const session_id = this.resolve(who, m.target)
          const text = this.mark(who)
          out.push({
            id,
            change: {
              type: 'entry',
              session_id,
              base_revision: null,
              entry: {
                id: m.entry_id,
                parent_id: null,
                timestamp: 1,
                revision: 0,
                kind: 'message',
                message: user(text),
              },
            },
          })
          plan.push((r) => {
            if (r?.status !== 'applied') return
            if (!this.model[who].has(session_id))
              throw new Violation(
                'isolation',
                `${who}'s entry landed in ${show(session_id)}, not its session: ${JSON.stringify(r)}`,
              )
            const entries = this.model[who].get(session_id)!
            if (!entries.has(m.entry_id)) entries.set(m.entry_id, text)
          })
          break
        }
        case 'edit': {
          const session_id = this.resolve(who, m.target)
          out.push({
            id,
            change: { type: 'meta', meta: meta(session_id, this.mark(who)), fields: ['title'] },
          })
          plan.push((r) => {
            if (r?.status === 'applied' && this.model[other(who)].has(session_id))
              throw new Violation('isolation', `${who} edited ${other(who)}'s session ${show(session_id)}`)
          })
          break
        }
        case 'leaf': {
          const session_id = this.resolve(who, m.target)
          out.push({ id, change: { type: 'leaf', session_id, entry_id: m.entry_id } })
          plan.push((r) => {
            if (r?.status === 'applied' && this.model[other(who)].has(session_id))
              throw new Violation(
                'isolation',
                `${who} moved the leaf of ${other(who)}'s session ${show(session_id)}`,
              )
          })
          break
        }
        case 'delete': {
          const session_id = this.resolve(who, m.target)
          out.push({ id, change: { type: 'delete', session_id } })
          plan.push((r) => {
            if (r?.status !== 'applied') return
            if (this.model[other(who)].has(session_id))
              throw new Violation('isolation', `${who} deleted ${other(who)}'s session ${show(session_id)}`)
            this.model[who].delete(session_id)
          })
          break
        }
      }
    }
    return { body: { mutations: out }, plan }
  }

  hostileBody(who: Who, endpoint: string, h: Hostile): { text: string; type?: string } {
    const title = JSON.stringify(this.mark(who))
    switch (h.shape) {
      case 'deep': {
        // Deep where the request takes any JSON (metadata), so it reaches the validators.
        const deep = `{"k":${nest(h.depth, '1')}}`
        const canary = JSON.stringify(`canary-${who}`)
        if (endpoint === '/sync/push')
          return {
            text: `{"mutations":[{"id":1,"change":{"type":"meta","create":true,"meta":${JSON.stringify(meta('deep', 'x')).replace('"metadata":{}', `"metadata":${deep}`)}}}]}`,
          }
        if (endpoint.endsWith('set-meta')) return { text: `{"session_id":${canary},"metadata":${deep}}` }
        if (endpoint.endsWith('append'))
          return {
            text: `{"session_id":${canary},"message":{"role":"user","timestamp":0,"content":${nest(h.depth, `{"type":"text","text":${title}}`)}}}`,
          }
        if (endpoint.endsWith('nope')) return { text: nest(h.depth, '1') }
        return {
          text: `{"session_id":"deep","title":${title},"metadata":${deep}}`.replace(
            endpoint.endsWith('ensure') ? '' : '"session_id":"deep",',
            '',
          ),
        }
      }
      case 'wide':
        return { text: `{"mutations":[${new Array(h.n).fill('0').join(',')}],"messages":[]}` }
      case 'keys':
        return {
          text: `{"session_id":"keys","metadata":{${Array.from({ length: h.n }, (_, i) => `"k${i}":${i}`).join(',')}}}`,
        }
      case 'long-string':
        return { text: `{"session_id":"long","title":"${'t'.repeat(h.n)}"}` }
      case 'oversize':
        return { text: `{"session_id":"big","title":"${'b'.repeat(MAX_BODY + 10)}"}` }
      case 'raw':
        return { text: h.text }
      case 'text-plain':
        return { text: '{}', type: 'text/plain' }
    }
  }

  async step(a: Action): Promise<void> {
    this.log.push(
      JSON.stringify(a, (_k, v) =>
        typeof v === 'string' && v.length > 60 ? `${v.slice(0, 20)}…(${v.length})` : v,
      ),
    )
    switch (a.kind) {
      case 'ensure': {
        const r = await this.rpc(a.who, 'ensure', { session_id: a.id, title: this.mark(a.who) })
        if (r.status !== 200) break
        const id = r.json.meta.session_id as string
        if (this.model[other(a.who)].has(id))
          throw new Violation('isolation', `${a.who} was handed ${other(a.who)}'s session ${show(id)}`)
        if (!this.model[a.who].has(id)) this.model[a.who].set(id, new Map())
        break
      }
      case 'append': {
        const session_id = this.resolve(a.who, a.target)
        const text = this.mark(a.who)
        const r = await this.rpc(a.who, 'append', {
          session_id,
          ...(a.entry_id !== null && { entry_id: a.entry_id }),
          message: user(text),
        })
        if (r.status !== 200) break
        if (!this.model[a.who].has(session_id))
          throw new Violation(
            'isolation',
            `${a.who} appended to ${show(session_id)}, which is not its session`,
          )
        // An append with an entry id the session has is an idempotent replay: the entry stays as it was.
        const entries = this.model[a.who].get(session_id)!
        if (!entries.has(r.json.entry_id)) entries.set(r.json.entry_id, text)
        break
      }
      case 'update': {
        const own = [...this.model[a.who]].flatMap(([s, es]) => [...es.keys()].map((e) => [s, e] as const))
        if (!own.length) break
        const [session_id, entry_id] = own[a.pick % own.length]
        const text = this.mark(a.who)
        const r = await this.rpc(a.who, 'update-message', {
          session_id,
          entry_id,
          content: [{ type: 'text', text }],
        })
        if (r.status === 200) this.model[a.who].get(session_id)!.set(entry_id, text)
        break
      }
      case 'write': {
        // Every other write, with ids of every shape where it takes one (an entry id, a metadata key).
        const session_id = this.resolve(a.who, a.target)
        const own = [...(this.model[a.who].get(session_id)?.keys() ?? [])]
        const entry_id = own.length ? own[a.pick % own.length] : a.id
        const foreign = this.model[other(a.who)].has(session_id)
        if (a.fn === 'append-many') {
          const texts = [this.mark(a.who), this.mark(a.who)]
          const r = await this.rpc(a.who, 'append-many', {
            session_id,
            messages: texts.map(user),
            ...(a.pick % 2 === 0 && { parent_id: a.id }),
          })
          if (r.status !== 200) break
          if (foreign || !this.model[a.who].has(session_id))
            throw new Violation(
              'isolation',
              `${a.who} appended to ${show(session_id)}, which is not its session`,
            )
          r.json.entry_ids.forEach((id: string, i: number) =>
            this.model[a.who].get(session_id)!.set(id, texts[i]),
          )
        } else if (a.fn === 'fork') {
          const r = await this.rpc(a.who, 'fork', { session_id, entry_id, title: this.mark(a.who) })
          if (r.status !== 200) break
          if (foreign)
            throw new Violation('isolation', `${a.who} forked ${other(a.who)}'s session ${show(session_id)}`)
          this.model[a.who].set(r.json.session_id, new Map())
        } else {
          const req =
            a.fn === 'set-active-leaf'
              ? { session_id, entry_id }
              : a.fn === 'set-meta'
                ? { session_id, title: this.mark(a.who), metadata: { [a.id]: this.mark(a.who) } }
                : { session_id, status: 'error', reason: a.id }
          const r = await this.rpc(a.who, a.fn, req)
          if (r.status === 200 && foreign)
            throw new Violation(
              'isolation',
              `${a.who}'s ${a.fn} changed ${other(a.who)}'s session ${show(session_id)}`,
            )
        }
        break
      }
      case 'delete': {
        const session_id = this.resolve(a.who, a.target)
        const r = await this.rpc(a.who, 'delete', { session_id })
        if (r.json?.deleted !== true) break
        if (this.model[other(a.who)].has(session_id))
          throw new Violation('isolation', `${a.who} deleted ${other(a.who)}'s session ${show(session_id)}`)
        this.model[a.who].delete(session_id)
        break
      }
      case 'read': {
        const session_id = this.resolve(a.who, a.target)
        if (a.fn === 'list') await this.rpc(a.who, 'list', { limit: 500 })
        else if (a.fn === 'history')
          await this.http(
            a.who,
            'GET',
            `/sessions/${encodeURIComponent(session_id.replace(/[\ud800-\udfff]/g, '\ufffd'))}/history`,
          )
        else if (a.fn === 'get-message')
          await this.rpc(a.who, 'get-message', {
            session_id,
            entry_id: [...(this.model[a.who].get(session_id)?.keys() ?? ['e'])][0],
          })
        else await this.rpc(a.who, a.fn, { session_id })
        break
      }
      case 'pull':
        await this.http(
          a.who,
          'GET',
          `/sync/pull?since=${encodeURIComponent(a.since)}${a.limit === null ? '' : `&limit=${encodeURIComponent(a.limit)}`}`,
        )
        break
      case 'push': {
        const { body, plan } = this.pushBody(a.who, a.mutations)
        const r = await this.http(a.who, 'POST', '/sync/push', JSON.stringify(body))
        if (r.status === 200) plan.forEach((check, i) => check(r.json.results[i]))
        break
      }
      case 'hostile': {
        const { text, type } = this.hostileBody(a.who, a.endpoint, a.body)
        const r = await this.http(a.who, 'POST', a.endpoint, text, type)
        // What was refused was not written; what was accepted is the actor's own (a plain create).
        if (r.status === 200 && a.endpoint === '/rpc/session::create')
          this.model[a.who].set(r.json.session_id, new Map())
        if (
          r.status === 200 &&
          a.endpoint === '/rpc/session::ensure' &&
          r.json?.meta &&
          !this.model[a.who].has(r.json.meta.session_id)
        )
          this.model[a.who].set(r.json.meta.session_id, new Map())
        break
      }
      case 'ws': {
        let s = this.sockets.find((x) => x.who === a.who && x.ws.url.includes('/sync/stream'))
        if (!s || s.ws.readyState !== WebSocket.OPEN) {
          await this.openSocket(a.who, '/sync/stream?since=0')
          s = this.sockets.at(-1)!
        }
        const f = a.frame
        let plan: Array<(r: any) => void> = []
        if (f.kind === 'garbage') s.ws.send(f.text)
        else if (f.kind === 'binary') s.ws.send(Buffer.from([0xff, 0x00, 0x7b]))
        else if (f.kind === 'oversize') s.ws.send(`{"type":"ping","id":"${'o'.repeat(MAX_BODY + 10)}"}`)
        else if (f.kind === 'deep') s.ws.send(`{"type":"push","id":"d","mutations":${nest(f.depth, '1')}}`)
        else if (f.kind === 'subscribe-other') {
          const events = this.sockets.find((x) => x.who === a.who && x.ws.url.includes('/events'))
          events?.ws.send(
            JSON.stringify({
              type: 'subscribe',
              id: 'o',
              trigger_type: 'session::message-added',
              config: { metadata: { owner: other(a.who) } },
            }),
          )
        } else {
          const built = this.pushBody(a.who, f.mutations)
          plan = built.plan
          s.ws.send(JSON.stringify({ type: 'push', id: 'p', ...built.body }))
        }
        // A push is answered once applied (its answer may come after a later pong); anything else
        // is answered before the pong of a ping sent after it.
        const before = s.frames.length
        const answered = (t: string): boolean =>
          f.kind === 'push' ? /"type":"(pushed|error)","id":"p"/.test(t) : t.includes('"id":"sync"')
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000)
          const done = (): void => {
            clearTimeout(timer)
            s!.ws.off('message', onMessage)
            resolve()
          }
          const onMessage = (data: Buffer): void => void (answered(data.toString()) && done())
          s!.ws.once('close', done)
          s!.ws.on('message', onMessage)
          if (s!.ws.readyState === WebSocket.OPEN) s!.ws.send(JSON.stringify({ type: 'ping', id: 'sync' }))
        })
        const pushed = s.frames
          .slice(before)
          .map((t) => JSON.parse(t))
          .find((m) => m.type === 'pushed')
        if (pushed) plan.forEach((check, i) => check(pushed.results[i]))
        break
      }
      case 'restart':
        await this.stop(a.signal)
        await this.start()
        await this.verify()
        break
    }
    this.flush()
  }
}

describe(`fuzz: two principals against a real server on ${BACKEND.name}`, () => {
  it(
    `no 5xx, no cross-tenant data, always writable, acknowledged writes survive restarts (${RUNS} runs, seed ${SEED})`,
    async () => {
      console.log(`[fuzz] seed ${SEED}${PATH ? ` path ${PATH}` : ''}, ${RUNS} runs of up to ${STEPS} steps`)
      const property = fc.asyncProperty(
        fc.array(actionArb, { minLength: Math.ceil(STEPS / 2), maxLength: STEPS }),
        async (actions) => {
          const data = await BACKEND.data()
          const run = new Run(data.args)
          try {
            await run.start()
            for (const who of WHO) await run.canary(who)
            for (const a of actions) {
              await run.step(a)
              // The principal that did not act can still write (and so can the one that did).
              await run.canary(a.kind === 'restart' ? 'alice' : other(a.who))
              run.flush()
            }
            await run.stop('SIGKILL')
            await run.start()
            await run.verify()
            run.flush()
          } catch (e) {
            if (e instanceof Violation) e.message += `\nsteps:\n  ${run.log.join('\n  ')}`
            throw e
          } finally {
            await run.server?.stop('SIGKILL')
            await data.remove()
          }
        },
      )
      const params: fc.Parameters<[Action[]]> = {
        numRuns: RUNS,
        seed: SEED,
        ...(PATH && { path: PATH }),
        endOnFailure: !SHRINK,
        verbose: 1,
      }
      const out = await fc.check(property, params)
      if (out.failed) {
        const replay = `COLLOQUY_FUZZ_SEED=${out.seed} COLLOQUY_FUZZ_PATH=${out.counterexamplePath}`
        console.error(
          `[fuzz] failed; replay with ${replay} npx vitest run --project node test/server/fuzz.test.ts`,
        )
        throw new Error(
          `${replay}\n${out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance)}`,
        )
      }
      if (!PATH) expect(out.numRuns).toBe(RUNS)
    },
    RUNS * 120_000 + 60_000,
  )
})
