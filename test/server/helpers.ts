import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStore, memoryStorage, type ReplicaChange, type SessionEntry, type SessionMeta, type Store } from '@colloquy/core'
import type { ChangePage, PushResult, SequencedChange } from '../../packages/server/src/index.js'
import { failure, postJson } from '../conformance/http-client.js'
import { startServer, type ServerProcess } from '../conformance/http-process.js'

export { failure, postJson, openSocket } from '../conformance/http-client.js'

export async function tempDir(label: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `colloquy-${label}-`))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

export { startServer, type ServerProcess }

/**
 * HTTP tests run the built `colloquy-server` in a child process on a loopback port: the test
 * runner resolves packages with the `browser` condition, under which `ws` (and so the server)
 * cannot load in-process.
 */
export async function memoryServer(args: readonly string[] = []): Promise<ServerProcess> {
  return startServer(['--memory', ...args])
}

export const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }], timestamp: 0 })

/** `POST /rpc/<fn>`: the response, or throws the wire error. */
export async function rpc<T = any>(url: string, fn: string, body: unknown, token?: string): Promise<T> {
  const res = await postJson(`${url}/rpc/${fn}`, body, token)
  if (!res.ok) throw await failure(res)
  return (await res.json()) as T
}

export async function pushChanges(url: string, changes: readonly ReplicaChange[], token?: string, firstId = 1): Promise<PushResult[]> {
  const res = await postJson(`${url}/sync/push`, { client_id: 'test', mutations: changes.map((change, i) => ({ id: firstId + i, change })) }, token)
  if (!res.ok) throw await failure(res)
  return ((await res.json()) as { results: PushResult[] }).results
}

export async function pull(url: string, since: number, limit?: number, token?: string): Promise<ChangePage> {
  const res = await fetch(`${url}/sync/pull?since=${since}${limit ? `&limit=${limit}` : ''}`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  if (!res.ok) throw await failure(res)
  return (await res.json()) as ChangePage
}

/** Pulls every page from `since`; returns the changes and the final checkpoint. */
export async function pullAll(url: string, since = 0, limit?: number, token?: string): Promise<{ changes: SequencedChange[]; checkpoint: number; pages: number }> {
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
  for (const [id, s] of store.engine.state.sessions) {
    await store.engine.ensureLoaded(id)
    const held = store.engine.state.sessions.get(id)!
    out[id] = { meta: s.head.meta, leaf: s.head.leaf, entries: [...(held.entries?.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1)) }
  }
  return out
}

/** What a replica must agree with the server on (counters and timestamps included). */
export function comparable(s: Record<string, Snapshot>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(s).map(([id, v]) => [id, { meta: v.meta, leaf: v.leaf, entries: v.entries }]))
}
