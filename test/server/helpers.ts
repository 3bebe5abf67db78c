import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createStore,
  memoryStorage,
  type ReplicaChange,
  type SessionEntry,
  type SessionMeta,
  type Store,
} from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { afterAll, afterEach, beforeAll } from 'vitest'
import type { ChangePage, PushResult, SequencedChange } from '../../packages/server/src/index.js'
import { failure, postJson } from '../conformance/http-client.js'
import { attachmentFolderName } from '../../packages/server/src/storage/file/attachment-files.js'
import { startServer, type ServerProcess } from '../conformance/http-process.js'

export { failure, postJson, openSocket } from '../conformance/http-client.js'

export async function tempDir(label: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `colloquy-${label}-`))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

export { startServer, type ServerProcess }

/**
 * Per-test cleanup for a test file: `defer` registers a cleanup, run after the test, last
 * registered first; `dataDir()` is a new temporary directory (named after `label`) removed so.
 */
export function cleanupAfterEach(label: string): {
  defer(cleanup: () => Promise<unknown>): void
  dataDir(): Promise<string>
} {
  const cleanups: Array<() => Promise<unknown>> = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  const defer = (cleanup: () => Promise<unknown>): void => void cleanups.push(cleanup)
  return {
    defer,
    async dataDir() {
      const t = await tempDir(label)
      defer(t.remove)
      return t.dir
    },
  }
}

/**
 * HTTP tests run the built `colloquy-server` in a child process on a loopback port: the test
 * runner resolves packages with the `browser` condition, under which `ws` (and so the server)
 * cannot load in-process.
 */
export async function memoryServer(args: readonly string[] = []): Promise<ServerProcess> {
  return startServer([...(await storageArgs()), ...args])
}

let storage: () => Promise<readonly string[]> = async () => ['--memory']

/**
 * The storage options of the servers these suites start (default `--memory`). A file that runs
 * a suite against another storage (PostgreSQL) sets it before importing the suite.
 */
export function setStorageArgs(args: () => Promise<readonly string[]>): void {
  storage = args
}

export function storageArgs(): Promise<readonly string[]> {
  return storage()
}

/**
 * Where a suite that restarts its server on the same data (the fuzz suite) keeps it: one place
 * per run, kept across restarts. Default: a data directory (the file storage); a file that runs
 * the suite against PostgreSQL sets a fresh database per run before importing it.
 */
export interface DataBackend {
  /** As the suite's title names it. */
  readonly name: string
  /** Fuzz runs by default (COLLOQUY_FUZZ_RUNS overrides it): a CI-sized budget per backend. */
  readonly runs: number
  /** Whether `session::search` runs core's index in the server (built on a first search), not the storage's own full text. */
  readonly serverIndex: boolean
  data(): Promise<KeptData>
}

/** One run's data: the server arguments that open it, its removal, and a look at what it stores. */
export interface KeptData {
  readonly args: readonly string[]
  remove(): Promise<void>
  /** The attachment contents the storage holds for a session (by sha256, sorted), and their stored size. */
  contents(session_id: string): Promise<Array<{ sha256: string; bytes: number }>>
  /** Every byte it stores (for marker scans): the files of the data directory, or a `pg_dump`. */
  raw(): Promise<Buffer[]>
}

/**
 * Whether any stored byte sequence holds `marker`: as UTF-8 (files, JSON, text columns), or as
 * the hex of its UTF-8 bytes (how `pg_dump` writes a bytea column: attachment bytes).
 */
export const holdsMarker = (raw: readonly Buffer[], marker: string): boolean => {
  const utf8 = Buffer.from(marker, 'utf8')
  const hex = Buffer.from(utf8.toString('hex'))
  return raw.some((b) => b.includes(utf8) || b.includes(hex))
}

/** The contents of every file under `dir`. */
async function filesUnder(dir: string): Promise<Buffer[]> {
  const files: Buffer[] = []
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory()) files.push(...(await filesUnder(join(dir, e.name))))
    else if (e.isFile()) files.push(await readFile(join(dir, e.name)))
  }
  return files
}

let dataBackend: DataBackend = {
  name: 'its file storage',
  runs: 12,
  serverIndex: true,
  async data() {
    const tmp = await tempDir('data')
    return {
      args: ['--data-dir', tmp.dir],
      remove: tmp.remove,
      raw: () => filesUnder(tmp.dir),
      async contents(session_id) {
        // The file storage's layout: `attachments/<boundedName(session)>.d/<sha256>.bin`.
        const folder = join(tmp.dir, 'attachments', attachmentFolderName(session_id))
        const names = (await readdir(folder).catch(() => [] as string[]))
          .filter((n) => n.endsWith('.bin'))
          .sort()
        return Promise.all(
          names.map(async (n) => ({ sha256: n.slice(0, -4), bytes: (await stat(join(folder, n))).size })),
        )
      },
    }
  },
}

export function setDataBackend(backend: DataBackend): void {
  dataBackend = backend
}

export function currentDataBackend(): DataBackend {
  return dataBackend
}

/** A `memoryServer` for a whole test file: started before its tests, stopped after them. */
export function useMemoryServer(args: readonly string[] = []): { readonly url: string } {
  let server: ServerProcess | undefined
  beforeAll(async () => {
    server = await memoryServer(args)
  })
  afterAll(() => server?.stop())
  return {
    get url() {
      return server!.url
    },
  }
}

export const user = (text: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text }],
  timestamp: 0,
})

/** `POST /rpc/<fn>`: the response, or throws the wire error. */
export async function rpc<T = any>(url: string, fn: string, body: unknown, token?: string): Promise<T> {
  const res = await postJson(`${url}/rpc/${fn}`, body, token)
  if (!res.ok) throw await failure(res)
  return (await res.json()) as T
}

export async function pushChanges(
  url: string,
  changes: readonly ReplicaChange[],
  token?: string,
  firstId = 1,
): Promise<PushResult[]> {
  const res = await postJson(
    `${url}/sync/push`,
    { client_id: 'test', mutations: changes.map((change, i) => ({ id: firstId + i, change })) },
    token,
  )
  if (!res.ok) throw await failure(res)
  return ((await res.json()) as { results: PushResult[] }).results
}

export async function pull(url: string, since: number, limit?: number, token?: string): Promise<ChangePage> {
  const res = await fetch(`${url}/sync/pull?since=${since}${limit ? `&limit=${limit}` : ''}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  })
  if (!res.ok) throw await failure(res)
  return (await res.json()) as ChangePage
}

/** Pulls every page from `since`; returns the changes and the final checkpoint. */
export async function pullAll(
  url: string,
  since = 0,
  limit?: number,
  token?: string,
): Promise<{ changes: SequencedChange[]; checkpoint: number; pages: number }> {
  const changes: SequencedChange[] = []
  let checkpoint = since
  let pages = 0
  for (;;) {
    const page = await pull(url, checkpoint, limit, token)
    pages++
    changes.push(...page.changes)
    checkpoint = page.checkpoint
    if (!page.more) return { changes, checkpoint, pages }
  }
}

/** A client replica: a core store that applies pulled changes with the pull policy. */
export async function replica(): Promise<Store> {
  return createStore({ storage: memoryStorage(), multiTab: false })
}

export interface Snapshot {
  meta: SessionMeta
  leaf: string | null
  entries: SessionEntry[]
}

/** Every session of a store: meta, leaf and all entries (every branch), by id. */
export async function snapshot(store: Store): Promise<Record<string, Snapshot>> {
  await store.flush()
  const out: Record<string, Snapshot> = {}
  // Every session, held or not (a store over paged reads holds a working set of heads).
  for await (const head of hostOf(store).everyHead()) {
    const id = head.meta.session_id
    await store.engine.ensureLoaded(id)
    const held = store.engine.state.sessions.get(id)!
    out[id] = {
      meta: held.head.meta,
      leaf: held.head.leaf,
      entries: [...(held.entries?.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1)),
    }
  }
  return out
}

/** What a replica must agree with the server on (counters and timestamps included). */
export function comparable(s: Record<string, Snapshot>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(s).map(([id, v]) => [id, { meta: v.meta, leaf: v.leaf, entries: v.entries }]),
  )
}

/** A JSON WebSocket for tests: every message kept, waits by predicate, the close code. */
export interface TestSocket {
  readonly messages: any[]
  /** The first message (already received or coming) that matches. */
  next(match: (m: any) => boolean, timeoutMs?: number): Promise<any>
  send(message: unknown): void
  /** Sends a ping and resolves on its pong: everything the server sent before is in `messages`. */
  sync(): Promise<void>
  close(): void
  readonly closed: Promise<{ code: number; reason: string }>
}

let pings = 0

export async function testSocket(url: string, token?: string): Promise<TestSocket> {
  const { openSocket } = await import('../conformance/http-client.js')
  const messages: any[] = []
  const waiters = new Set<{ match: (m: any) => boolean; resolve(m: any): void }>()
  const ws = await openSocket(url, token, (data) => {
    const m: unknown = JSON.parse(data.toString())
    messages.push(m)
    for (const w of [...waiters]) {
      if (!w.match(m)) continue
      waiters.delete(w)
      w.resolve(m)
    }
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    if (ws.readyState === ws.CLOSED) resolve({ code: 0, reason: 'closed before the test looked' })
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }))
  })
  const next = (match: (m: any) => boolean, timeoutMs = 5000): Promise<any> => {
    const found = messages.find(match)
    if (found) return Promise.resolve(found)
    return new Promise((resolve, reject) => {
      const w = { match, resolve: (m: any) => (clearTimeout(timer), resolve(m)) }
      const timer = setTimeout(
        () => (
          waiters.delete(w),
          reject(
            new Error(
              `no matching message in ${timeoutMs} ms; got ${JSON.stringify(messages).slice(0, 500)}`,
            ),
          )
        ),
        timeoutMs,
      )
      waiters.add(w)
    })
  }
  return {
    messages,
    next,
    send: (m) => ws.send(JSON.stringify(m)),
    async sync() {
      const id = `ping-${++pings}`
      ws.send(JSON.stringify({ type: 'ping', id }))
      await next((m) => m.type === 'pong' && m.id === id)
    },
    close: () => ws.close(),
    closed,
  }
}
