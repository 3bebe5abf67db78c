import { BehaviorSubject, Subject } from 'rxjs'
import type { SequencedChange } from '@colloquy/core/protocol'
import { SessionError, type Store } from '@colloquy/core'
import type { KeySource } from '@colloquy/core/crypto'
import { hostOf } from '@colloquy/core/host'
import { OUTBOX, type OutboxRecord } from './outbox.js'
import { httpTransport, type Transport } from './transport.js'
import { sealingTransport, type SealingTransport } from './sealing.js'
import { storeCounters } from './sealed-counters.js'
import { storeSent } from './sealed-sent.js'
import type { Conflict, IntegrityFailure, Rejection, SyncOptions, SyncState, SyncStatus } from './types.js'
import { tell } from './tab-channel.js'

export type Records = Array<{ key: number; value: OutboxRecord }>

/** The side store holding the checkpoint, its epoch, a resync under way and the rejections. */
export const KV = 'kv'

/** During a full resync: what the server sent, so that what it lacks can be pushed again. */
export interface Resync {
  readonly sessions: Set<string>
  readonly entries: Set<string>
  /** The local active leaves before the resync's pull moved them to the server's. */
  readonly leaves: Map<string, string>
}

/**
 * Everything one sync engine knows, in one place: push (`push.ts`), pull (`pull.ts`), the live
 * stream (`stream.ts`), resync (`resync.ts`) and the leader's loop (`loop.ts`) each take it and
 * change only the parts named for them. One loop at a time owns it (`createSync` waits for the
 * previous one to wind down).
 */
export interface Replication {
  readonly store: Store
  readonly transport: Transport
  /** With end-to-end encryption: the sealing layer of `transport` (sealing.ts). */
  readonly sealing: SealingTransport | undefined
  readonly options: SyncOptions
  readonly now: () => number
  readonly clientId: string
  readonly batchSize: number
  /**
   * Most mutations in one push request: the batch size until the server refuses a push as too
   * large (413), then half of the refused push's (push.ts).
   */
  pushLimit: number
  readonly pullLimit: number
  readonly status: BehaviorSubject<SyncStatus>
  readonly conflicts: Subject<Conflict>
  readonly rejected: Subject<Rejection>
  /** Server changes refused because they do not open (end-to-end encryption). */
  readonly integrity: Subject<IntegrityFailure>
  /** Where the leader tells the other tabs its status. */
  readonly channel: BroadcastChannel | undefined

  /** Whether this tab is the one replicating. */
  leader: boolean

  // The cursor (checkpoint.ts): stored with the changes it covers, in one transaction.
  checkpoint: number
  /** The newest seq the server has said it holds. */
  head: number
  epoch: string | undefined
  resync: Resync | undefined

  // The loop (loop.ts).
  stream: { close(): void } | undefined
  /** Stream refusals in a row (429, error frames): the reopening backs off. */
  streamRefusals: number
  wakeUp: (() => void) | undefined
  /**
   * While the loop waits out a failure's backoff, local commits do not cut it short: a streamed
   * reply commits once per chunk, and each would be a request to a server that is down. Going
   * online, the stream and `flush()` still wake it at once.
   */
  backingOff: boolean
  dirty: boolean
  flushWaiters: Array<() => void>
  /** Pulls, stream messages and push answers apply one at a time, in order (`serially`). */
  applying: Promise<void>
  /** Attachment downloads `eagerAttachments` started and `flush()` waits for. */
  fetching: Set<Promise<unknown>>

  // Own echoes (echoes.ts).
  /**
   * Outbox records sent and not yet acknowledged: the server has them (or will, before it
   * answers), so server changes arriving meanwhile may be newer than them.
   */
  readonly inflight: Set<number>
  /**
   * Server changes for what an in-flight mutation sets (per key: entry, meta, leaf) wait in
   * `held` until its answer says where the mutation landed in the server's log: an echo of an
   * older change (ours or another device's) arriving meanwhile must not undo the newer one in
   * flight, and one committed after it must still be applied. They are held, not dropped: the
   * checkpoint may pass them meanwhile. Kept in memory only: a device stopped before the answer
   * finds the mutation in its outbox again, not yet sent, and pushes it again; server changes for
   * its key are then shielded as for any unsent change and its push sets the server's value.
   * `holding` counts the in-flight mutations per key.
   */
  readonly holding: Map<string, number>
  held: SequencedChange[]
  /**
   * Per key, the log position a push answer gave: a server change for that key below it is
   * superseded (a late echo of an older change) and never applied. Forgotten once the
   * checkpoint passes it (no change below it can arrive then).
   */
  readonly landed: Map<string, number>
  /** Bumped by a resync: positions answered from before it are not compared with the new log. */
  generation: number
}

export function replication(store: Store, options: SyncOptions): Replication {
  const now = options.now ?? Date.now
  const integrity = new Subject<IntegrityFailure>()
  const wire = options.transport ?? httpTransport(options)
  // With a keyring, what crosses the wire is sealed (sealing.ts); the rest of the engine is the same.
  const keyring = options.keyring ?? storeKeys(store)
  const sealing = keyring
    ? sealingTransport(
        wire,
        keyring,
        (f) => integrity.next({ ...f, at: now() }),
        options.policy,
        storeCounters(store, KV),
        storeSent(store, KV),
        // The store's own keys: its attachments are sealed at rest exactly as an upload is.
        options.keyring ? undefined : (sid, aid) => hostOf(store).sealedAttachmentBytes(sid, aid),
      )
    : undefined
  return {
    store,
    transport: sealing ?? wire,
    sealing,
    integrity,
    options,
    now,
    clientId: `c_${Math.random().toString(36).slice(2)}${now().toString(36)}`,
    batchSize: options.batchSize ?? 500,
    pushLimit: options.batchSize ?? 500,
    pullLimit: options.pullLimit ?? 1000,
    status: new BehaviorSubject<SyncStatus>({ state: 'offline', pending: 0, leader: false }),
    conflicts: new Subject<Conflict>(),
    rejected: new Subject<Rejection>(),
    channel:
      typeof BroadcastChannel !== 'undefined'
        ? new BroadcastChannel(`colloquy-sync:${store.storage.name}`)
        : undefined,
    leader: false,
    checkpoint: 0,
    head: 0,
    epoch: undefined,
    resync: undefined,
    stream: undefined,
    streamRefusals: 0,
    wakeUp: undefined,
    backingOff: false,
    dirty: true,
    flushWaiters: [],
    applying: Promise.resolve(),
    fetching: new Set(),
    inflight: new Set(),
    holding: new Map(),
    held: [],
    landed: new Map(),
    generation: 0,
  }
}

export function setStatus(s: Replication, patch: Partial<SyncStatus> & { state?: SyncState }): void {
  const next = { ...s.status.value, ...patch, leader: s.leader }
  if (patch.state && patch.state !== 'error') delete (next as { error?: string }).error
  s.status.next(next)
  if (s.leader) tell(s.channel, { kind: 'status', status: next })
}

/** Runs the loop again at once (new local changes, going online, a stream that needs a pull). */
export function wake(s: Replication): void {
  s.dirty = true
  s.wakeUp?.()
}

/** Runs after the applies and answers queued before it, before any queued after it. */
export function serially<T>(s: Replication, fn: () => Promise<T>): Promise<T> {
  const p = s.applying.then(fn)
  s.applying = p.then(
    () => {},
    () => {},
  )
  return p
}

export function closeStream(s: Replication): void {
  s.stream?.close()
  s.stream = undefined
}

export const outbox = async (s: Replication): Promise<Records> =>
  ((await s.store.storage.sideRecords?.(OUTBOX)) ?? []) as Records

export const kv = async (s: Replication): Promise<Map<string, unknown>> =>
  new Map(((await s.store.storage.sideRecords?.(KV)) ?? []).map((r) => [String(r.key), r.value]))

export const refreshPending = async (s: Replication): Promise<void> =>
  setStatus(s, { pending: (await outbox(s)).length })

/**
 * An encrypted store's keys, read live: what it holds now (a passphrase change or an unlock in
 * another tab hands it new ones). While the store is locked there is none, and sealing or opening
 * fails with `session/locked`: sync waits and retries, and nothing crosses the wire in clear.
 */
function storeKeys(store: Store): KeySource | undefined {
  const host = hostOf(store)
  if (!host.encrypted) return undefined
  const current = (): KeySource => {
    const keyring = host.keyring
    if (!keyring) throw new SessionError('session/locked', 'the store is locked: unlock it to sync')
    return keyring
  }
  return {
    get currentKeyId() {
      return current().currentKeyId
    },
    keyFor: (id) => current().keyFor(id),
  }
}
