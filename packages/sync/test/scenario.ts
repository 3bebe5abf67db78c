import { expect } from 'vitest'
import fc from 'fast-check'
import { createStore, memoryStorage, type Storage, type Store } from '@colloquy/core'
import { Keyring, openEntry, openMeta } from '@colloquy/core/crypto'
import { KEYRING_KEY } from '../../core/src/storage/sealed/encryption.js'
import { createSync, type IntegrityFailure, type Sync, type Transport } from '../src/index.js'
import { DEFAULT_POLICY } from '../src/sealing.js'
import { replicaSnapshot, type ReplicaSession } from '../../../test/support/replica-snapshot.js'
import { loopback } from './loopback.js'

const text = (t: string) => [{ type: 'text' as const, text: t }]

export type Action =
  | { kind: 'append'; device: number; session: number; parent: number | null; assistant: boolean }
  | { kind: 'update'; device: number; entry: number; text: string }
  | { kind: 'leaf'; device: number; entry: number }
  | { kind: 'title'; device: number; session: number; title: string }
  | { kind: 'toggle'; device: number }
  | { kind: 'sync'; device: number }
  | { kind: 'restart'; instance: number }

/** Actions on `devices` devices; with `restarts`, server processes killed and started again too. */
export const action = (devices: number, options: { restarts?: boolean } = {}): fc.Arbitrary<Action> => {
  const device = fc.nat({ max: devices - 1 })
  const restart = {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('restart' as const), instance: fc.nat(1) }),
  }
  return fc.oneof(
    ...(options.restarts ? [restart] : []),
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('append' as const),
        device,
        session: fc.nat(2),
        parent: fc.option(fc.nat(40), { nil: null }),
        assistant: fc.boolean(),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('update' as const),
        device,
        entry: fc.nat(40),
        text: fc.string({ maxLength: 8 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('leaf' as const), device, entry: fc.nat(40) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('title' as const),
        device,
        session: fc.nat(2),
        title: fc.string({ maxLength: 6 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('toggle' as const), device }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('sync' as const), device }) },
  )
}

/**
 * Where the devices sync to: the in-process loopback by default, or real servers (device `d`'s
 * transport may go to any instance). `truth` is the server's state of the given sessions.
 */
export interface Backend {
  transport(device: number): Transport
  truth(sessions: readonly string[]): Promise<Record<string, unknown>>
  /** Every byte the server keeps (its log, files or a database dump), for the marker scan. */
  raw?(): Promise<string | Buffer>
  /** Kills a server process (SIGKILL, whatever it was doing) and starts it again on its data. */
  restart?(instance: number): Promise<void>
  close(): Promise<void>
}

/** The text of every message a scenario appends: found in what a clear server keeps, never a sealed one. */
export const MARKER = 'chaos-marker-5e1b7c'

/**
 * End-to-end encryption for a scenario: every device syncs with `keyring`. With `kek`, every
 * device's store is encrypted at rest too, over a database already holding `keyring` (wrapped
 * under `kek`, as `Keyring.create({ key: kek })` makes it), and syncs with its own keys.
 */
export interface Sealed {
  readonly keyring: Keyring
  readonly kek?: CryptoKey
}

async function loopbackBackend(): Promise<Backend> {
  const server = await loopback()
  return {
    transport: () => server.transport(),
    truth: async () => replicaSnapshot(server.store),
    raw: async () => JSON.stringify(server.log),
    close: () => server.close(),
  }
}

/** The given sealed sessions of a server's snapshot, opened (what every device must hold in clear). */
export async function opened(
  keyring: Keyring,
  truth: Record<string, unknown>,
  sessions: readonly string[],
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const id of sessions) {
    const value = truth[id]
    if (!value) continue
    const s = value as ReplicaSession
    const meta = await openMeta(keyring, s.meta, DEFAULT_POLICY)
    const entries = []
    for (const e of s.entries) entries.push(await openEntry(keyring, id, e))
    out[id] = { meta: { ...meta, updated_at: 0 }, leaf: s.leaf, entries }
  }
  return out
}

/** An encrypted scenario with every store encrypted at rest over one keyring (see `Sealed`). */
export async function encryptedStores(): Promise<Sealed> {
  const kek = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, [
    'wrapKey',
    'unwrapKey',
  ])
  return { keyring: await Keyring.create({ key: kek }), kek }
}

/**
 * A device's store over `storage`: clear, or encrypted at rest holding the scenario's keyring
 * (written into a database that holds none yet, as a device that opened it before left it).
 */
export async function deviceStore(
  sealed: Sealed | undefined,
  storage: Storage = memoryStorage(),
): Promise<Store> {
  if (!sealed?.kek) return createStore({ storage, multiTab: false })
  const value = sealed.keyring.serialize()
  if (!(await storage.sideRecords!('kv')).some((r) => r.key === KEYRING_KEY))
    await storage.transact(async () => ({
      deleted: new Set<string>(),
      heads: new Map(),
      entries: new Map(),
      side: [{ store: 'kv', key: KEYRING_KEY, value }],
    }))
  return createStore({ storage, multiTab: false, encryption: { key: sealed.kek } })
}

/** Longer than any backoff a scenario's flush can wait out (30 s at most, `backoff.ts`). */
const FLUSH_LIMIT_MS = 90_000

/**
 * `sync.flush()`, failing after FLUSH_LIMIT_MS with what the sync last said and where the
 * scenario was: a flush that never ends (a request the server never answers, a loop that
 * never reaches the server's head) then says so, instead of the test timing out mute.
 */
async function flushed(sync: Sync, where: string): Promise<void> {
  let last: unknown
  const watching = sync.status$.subscribe((st) => (last = st))
  let timer: ReturnType<typeof setTimeout> | undefined
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `flush of ${where} still waiting after ${FLUSH_LIMIT_MS} ms; status ${JSON.stringify(last)}`,
          ),
        ),
      FLUSH_LIMIT_MS,
    )
  })
  try {
    await Promise.race([sync.flush(), limit])
  } finally {
    clearTimeout(timer)
    watching.unsubscribe()
  }
}

/**
 * Runs one interleaving; throws when replicas do not converge. With `sealed`, every device
 * syncs end-to-end encrypted: the server holds sealed sessions, opened here to compare, and
 * none of what it keeps holds the marker; no device refuses anything on `integrity$`.
 */
export async function runScenario(
  n: number,
  actions: Action[],
  backend?: Backend,
  sealed?: Sealed,
): Promise<void> {
  const keyring = sealed?.keyring
  const server = backend ?? (await loopbackBackend())
  const online = Array.from({ length: n }, () => true)
  const devices: Array<{ store: Store; sync: Sync; refused: IntegrityFailure[] }> = []
  for (let d = 0; d < n; d++) {
    const base = server.transport(d)
    const gate = <T>(f: () => Promise<T>): Promise<T> =>
      online[d] ? f() : Promise.reject(Object.assign(new Error('offline'), { retryable: true }))
    const transport: Transport = {
      push: (r) => gate(() => base.push(r)),
      pull: (s, l, e) => gate(() => base.pull(s, l, e)),
      stream: (s, m, c, e) =>
        online[d] ? base.stream(s, m, c, e) : (queueMicrotask(() => c(new Error('offline'))), { close() {} }),
    }
    const store = await deviceStore(sealed)
    // An encrypted store syncs with its own keys (the same keyring on every device).
    const sync = createSync(store, { url: 'x', transport, ...(!sealed?.kek && { keyring }) })
    const refused: IntegrityFailure[] = []
    sync.integrity$.subscribe((f) => refused.push(f))
    devices.push({ store, sync, refused })
  }
  // Three shared sessions, created on device 0 and synced everywhere first.
  const sessions: string[] = []
  for (let i = 0; i < 3; i++) sessions.push((await devices[0].store.create({ title: `s${i}` })).session_id)
  for (const d of devices) d.sync.start()
  for (const [i, d] of devices.entries()) await flushed(d.sync, `device ${i} at the start`)
  await flushed(devices[0].sync, 'device 0 at the start')

  const appended = new Map<string, string>() // entry id → session id
  const highest = new Map<string, number>() // entry id → highest revision any device wrote
  for (const [step, a] of actions.entries()) {
    if (a.kind === 'restart') {
      await server.restart?.(a.instance)
      continue
    }
    const { store, sync } = devices[a.device]
    if (a.kind === 'append') {
      const session_id = sessions[a.session]
      await store.engine.ensureLoaded(session_id)
      const local = [...(store.engine.state.sessions.get(session_id)?.entries?.keys() ?? [])]
      const parent_id = a.parent === null || local.length === 0 ? undefined : local[a.parent % local.length]
      const message = a.assistant
        ? {
            role: 'assistant' as const,
            content: [],
            model: 'm',
            provider: 'p',
            stop_reason: 'end' as const,
            timestamp: 0,
          }
        : { role: 'user' as const, content: text(MARKER), timestamp: 0 }
      const r = await store.append({ session_id, parent_id, message })
      appended.set(r.entry_id, session_id)
      highest.set(r.entry_id, 0)
    } else if (a.kind === 'update' || a.kind === 'leaf') {
      if (appended.size === 0) continue
      const ids = [...appended.keys()]
      const entry_id = ids[a.entry % ids.length]
      const session_id = appended.get(entry_id)!
      const e = (await store.getMessage({ session_id, entry_id }))?.entry
      if (!e) continue // not on this device yet
      if (a.kind === 'leaf') await store.setActiveLeaf({ session_id, entry_id })
      else {
        const r = await store.updateMessage({ session_id, entry_id, content: text(a.text) })
        highest.set(entry_id, Math.max(highest.get(entry_id)!, r.revision))
      }
    } else if (a.kind === 'title') await store.setMeta({ session_id: sessions[a.session], title: a.title })
    else if (a.kind === 'toggle') online[a.device] = !online[a.device]
    else if (online[a.device]) {
      sync.stop()
      sync.start()
      await flushed(sync, `device ${a.device} at step ${step}`)
    }
  }
  online.fill(true)
  for (let round = 0; round < 2; round++) {
    for (const [i, d] of devices.entries()) {
      d.sync.stop()
      d.sync.start()
      await flushed(d.sync, `device ${i} in closing round ${round}`)
    }
  }
  const held = await server.truth(sessions)
  const truth = keyring ? await opened(keyring, held, sessions) : held
  const mine = (all: Record<string, unknown>) => Object.fromEntries(sessions.map((id) => [id, all[id]]))
  for (const d of devices)
    expect(JSON.stringify(mine(await replicaSnapshot(d.store)), null, 1)).toEqual(
      JSON.stringify(mine(truth), null, 1),
    )
  const onServer = Object.values(mine(truth)).flatMap(
    (s) => (s as { entries: Array<{ id: string; revision: number }> }).entries,
  )
  expect(onServer.map((e) => e.id).sort()).toEqual([...appended.keys()].sort())
  for (const e of onServer) expect(e.revision).toBeGreaterThanOrEqual(highest.get(e.id)!)
  for (const d of devices) expect(d.refused).toEqual([])
  if (server.raw) {
    // Sealed, the server keeps no byte of the marker; in clear the same scan finds it (when a
    // message still holds it), so the scan can fail.
    const raw = await server.raw()
    if (keyring) expect(raw.includes(MARKER)).toBe(false)
    else if (JSON.stringify(truth).includes(MARKER)) expect(raw.includes(MARKER)).toBe(true)
  }
  for (const d of devices) {
    d.sync.close()
    await d.store.close()
  }
  await server.close()
}
