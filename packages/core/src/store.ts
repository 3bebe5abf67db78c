import { BehaviorSubject, type Observable, defer, distinctUntilChanged, switchMap } from 'rxjs'
import type { ChangePayload, Commit, ChangeSource } from './engine/changes.js'
import type { IdKind, OpContext } from './model/context.js'
import { Engine, type CallGuard, type CommitHook } from './engine/engine.js'
import { SessionError } from './model/errors.js'
import { EventBus } from './live/events.js'
import { indexedDbStorage } from './storage/idb/idb-storage.js'
import type { ImportOptions, SessionImport } from './import/types.js'
import type { BeginImportOptions, ImportWriter } from './import/import-writer.js'
import {
  LiveQueries,
  newestLeafUnder,
  type BranchPosition,
  type DraftState,
  type LiveMessagesRequest,
  type SessionTree,
} from './live/live.js'
import {
  FUNCTION_IDS,
  type AttachmentMeta,
  type EventConfig,
  type EventEnvelope,
  type EventMap,
  type FunctionId,
  type FunctionMap,
  type ListRequest,
  type MessageItem,
  type SessionEntry,
  type SessionMeta,
  type TriggerType,
} from './model/model.js'
import type { AttachmentBytes } from './attachments/attachment-bytes.js'
import type { BatchRunner } from './engine/batches.js'
import type { StorageUsage } from './live/device-storage.js'
import { once } from './util/once.js'
import { relayCode, startRelay } from './relay/relay.js'
import type { ReplicaChange, ReplicaResult } from './model/replica-change.js'
import type { ApplyReplicaOptions } from './replica/apply-replica.js'
export type { ApplyReplicaOptions }
import type { Storage } from './storage/seam.js'
import type { Encryption, EncryptionOptions } from './storage/sealed/encryption.js'
import type { Keyring } from './crypto/keyring.js'
import type { KeySecret } from './crypto/kdf.js'
export type { EncryptionOptions }

export interface StoreOptions {
  /** Where sessions live; default `indexedDbStorage()` (the database named "colloquy"). */
  storage?: Storage
  /** The clock, in ms since epoch. */
  now?: () => number
  /** Full ids for new sessions, entries and attachments; default `s_…` / `e_…` / `a_…` with nanoid. */
  newId?: (kind: IdKind) => string
  /** `max_attachment_bytes` defaults to 50 MiB (52428800). */
  limits?: { default_list_limit?: number; max_list_limit?: number; max_attachment_bytes?: number }
  /** Relay commits between tabs over BroadcastChannel; default true where it exists. */
  multiTab?: boolean
  /**
   * Keep about `maxBytes` of entries in memory at most: the entries of sessions idle for
   * `idleMs` (default 1000) are dropped, least recently used first, and read again from storage
   * when needed (heads stay). Default: every session loaded stays loaded.
   */
  cache?: { maxBytes: number; idleMs?: number }
  /**
   * Over a storage that reads heads on demand (IndexedDB), how many session heads the store
   * keeps in memory once idle, least recently used let go first (sessions holding entries or
   * watched by a live query aside); default 500. Opening reads none of them.
   */
  maxHeads?: number
  /**
   * Fetch the code of the operations loaded on first use (and of imports and attachment bytes)
   * in the background once the store is open and the entries its first live queries asked for
   * are loaded; default true, so a page that goes offline without a
   * service worker caching its chunks still has every operation. Replication is never prefetched:
   * it runs only while connected. `false` leaves everything to its first use.
   */
  prefetch?: boolean
  /**
   * Encryption at rest (docs/encryption.md): `{ passphrase }` or `{ key }` (an AES-GCM
   * `CryptoKey` with `wrapKey`/`unwrapKey`). The keyring is made on first open and kept, wrapped,
   * in the store's database; a wrong passphrase is `session/wrong_passphrase` and nothing is
   * read or written. A store written in clear is encrypted in place first (resumably). Every
   * record the storage holds is then sealed; memory holds plaintext only while unlocked.
   */
  encryption?: EncryptionOptions
}

/** A passphrase, or what `createStore({ encryption })` takes: `{ passphrase }` or `{ key }`. */
export type Secret = string | KeySecret

type Req<K extends FunctionId> = FunctionMap[K][0]
type Res<K extends FunctionId> = Promise<FunctionMap[K][1]>

export interface Store {
  readonly storage: Storage
  create(request?: Req<'session::create'>): Res<'session::create'>
  ensure(request: Req<'session::ensure'>): Res<'session::ensure'>
  get(request: Req<'session::get'>): Res<'session::get'>
  list(request?: Req<'session::list'>): Res<'session::list'>
  delete(request: Req<'session::delete'>): Res<'session::delete'>
  setMeta(request: Req<'session::set-meta'>): Res<'session::set-meta'>
  setStatus(request: Req<'session::set-status'>): Res<'session::set-status'>
  append(request: Req<'session::append'>): Res<'session::append'>
  appendMany(request: Req<'session::append-many'>): Res<'session::append-many'>
  getMessage(request: Req<'session::get-message'>): Res<'session::get-message'>
  messages(request: Req<'session::messages'>): Res<'session::messages'>
  updateMessage(request: Req<'session::update-message'>): Res<'session::update-message'>
  setActiveLeaf(request: Req<'session::set-active-leaf'>): Res<'session::set-active-leaf'>
  fork(request: Req<'session::fork'>): Res<'session::fork'>
  setDraft(request: Req<'session::set-draft'>): Res<'session::set-draft'>
  /** Base64 `data` (the wire form), or a `Blob`/`File` as `file` (no base64 in the app). */
  putAttachment(request: Req<'session::put-attachment'>): Res<'session::put-attachment'>
  getAttachment(request: Req<'session::get-attachment'>): Res<'session::get-attachment'>
  listAttachments(request: Req<'session::list-attachments'>): Res<'session::list-attachments'>
  deleteAttachment(request: Req<'session::delete-attachment'>): Res<'session::delete-attachment'>
  messagesTail(request: Req<'session::messages-tail'>): Res<'session::messages-tail'>
  messagesRange(request: Req<'session::messages-range'>): Res<'session::messages-range'>
  mentionSearch(request?: Req<'session::mention::search'>): Res<'session::mention::search'>
  mentionGet(request: Req<'session::mention::get'>): Res<'session::mention::get'>
  /** An attachment's bytes as a Blob typed with its mime, read on demand; null when unknown. */
  getAttachmentBlob(session_id: string, attachment_id: string): Promise<Blob | null>
  /**
   * An object URL for an attachment (an `<img src>`), shared by every holder of the same
   * attachment and revoked when the last one calls `releaseAttachmentUrl`; null when unknown.
   */
  attachmentUrl(session_id: string, attachment_id: string): Promise<string | null>
  releaseAttachmentUrl(session_id: string, attachment_id: string): void
  /**
   * Where bytes this store lacks come from (sync: the server), for attachments whose metadata
   * arrived without them. Fetched bytes are kept. Returns a remover.
   */
  setAttachmentSource(source: AttachmentSource): () => void
  /** Dispatches by function id (`'session::append'` …): what transports and tests use. */
  call<K extends FunctionId>(functionId: K, request: Req<K>, options?: CallOptions): Res<K>
  call(functionId: string, request: unknown, options?: CallOptions): Promise<unknown>

  /** Payloads of one trigger type, filtered by the contract's binding config. */
  on<T extends TriggerType>(type: T, config?: EventConfig | null): Observable<EventMap[T]>
  session$(session_id: string): Observable<SessionMeta | null>
  /** The parked composer input (text and chips), live across tabs. */
  draft$(session_id: string): Observable<DraftState | null>
  /** The session's attachments (metadata only), live across tabs. */
  attachments$(session_id: string): Observable<readonly AttachmentMeta[] | null>
  sessions$(request?: Omit<ListRequest, 'cursor'>): Observable<SessionMeta[]>
  messages$(request: LiveMessagesRequest): Observable<MessageItem[]>
  entry$(session_id: string, entry_id: string): Observable<SessionEntry | null>
  tree$(session_id: string): Observable<SessionTree | null>
  /** An entry's place among its siblings ("2 / 3"), emitted again only when siblings are added. */
  branch$(session_id: string, entry_id: string): Observable<BranchPosition | null>
  /**
   * Shows the branch through `entry_id`: moves the active leaf to the newest leaf under it (what a
   * branch picker does when the reader picks a sibling).
   */
  selectBranch(request: { session_id: string; entry_id: string }): Res<'session::set-active-leaf'>

  /** Bulk load of a whole session, written in chunks: for importers and replication. */
  importSession(
    data: SessionImport,
    options?: ImportOptions,
  ): Promise<{ session_id: string; entries: number }>
  /**
   * An import in pieces: `append` chunks of entries as they are parsed (checked and written out
   * of sight), then `commit({ meta, active_leaf })` makes the session visible whole, or `abort()`.
   */
  beginImport(session_id: string, options?: BeginImportOptions): Promise<ImportWriter>
  /**
   * Asks the browser to keep this site's storage under pressure and from eviction
   * (`navigator.storage.persist()`): true when it will. Safari grants it to an installed app,
   * Chromium to an installed or bookmarked one, Firefox asks the user. False where there is no
   * such API (Node, an insecure context).
   */
  requestPersistence(): Promise<boolean>
  /**
   * This site's storage usage and quota in bytes, and whether it is persisted, as a live query:
   * read on subscribe, then after commits (at most about once a second). Nulls where the browser
   * does not say. Usage counts the whole origin, not this store alone.
   */
  readonly storage$: Observable<StorageUsage>
  /**
   * Settles once the background fetch of the code loaded on first use has ended (see
   * `prefetch`): true when every chunk arrived, so the store keeps working offline from here even
   * without a service worker caching its chunks; false when prefetching is off, the store closed
   * first, or a chunk failed (it is fetched again on first use). Never rejects.
   */
  readonly prefetched: Promise<boolean>
  /**
   * An encrypted store: finishes what was issued, then drops the keys and every plaintext this
   * store holds in memory, here and in every other tab of the store. Until `unlock`, every call
   * rejects with `session/locked`. A store without encryption: `session/invalid_request`.
   */
  lock(): Promise<void>
  /** Opens the stored keyring again (here and in every other tab); a wrong one is `session/wrong_passphrase`. */
  unlock(secret: Secret): Promise<void>
  /** Re-wraps the keys under a new passphrase (no content changes); every tab follows. */
  changePassphrase(current: Secret, next: Secret): Promise<void>
  /** Whether the store is locked now, and its changes (another tab's lock included). */
  readonly locked$: Observable<boolean>
  /**
   * A use of the store that is no call (wire it to keyboard and pointer input): it keeps an
   * encrypted store with `encryption.lockAfter` from locking, in every tab. Otherwise nothing.
   */
  touch(): void
  /** Resolves when everything issued so far is on disk. */
  flush(): Promise<void>
  close(): Promise<void>
  /** Once closed, every call rejects with `session/storage` (entry points beside this one check it). */
  readonly closed: boolean

  /** Every committed change (this store's, other tabs', remote): for sync and servers. */
  readonly commits$: Observable<Commit>
  /** Adds writes to every commit's transaction (the sync outbox); returns a remover. */
  addCommitHook(hook: CommitHook): () => void
  /** Folds changes made elsewhere into memory and announces them (storage already holds them). */
  applyExternal(source: ChangeSource, payload: ChangePayload, events: readonly EventEnvelope[]): void
  /**
   * Applies replicated changes (sync pull, or a server receiving pushes) with the replica rules,
   * in one transaction with `side` records (a checkpoint), firing the events they imply.
   */
  applyReplica(changes: readonly ReplicaChange[], options: ApplyReplicaOptions): Promise<ReplicaResult[]>
  /**
   * @internal The engine underneath: this package's own tests read its counters. Packages that
   * host a store read it through `hostOf` (`@colloquy/core/host`).
   */
  readonly engine: Engine
}

/** Fetches the bytes of an attachment held here as metadata only; null when there are none. */
export type AttachmentSource = (session_id: string, attachment_id: string) => Promise<Blob | null>
export interface CallOptions {
  /** Checked in the commit on the session's head, under its lock (see `CallGuard`). */
  guard?: CallGuard
}

/**
 * Code fetched on first use (bundlers give each its own chunk): the engine's batch runner and the
 * request schemas (what the first call of any function waits for), replication, bulk import,
 * attachment bytes, the entry cache. The one table of `import()`s: `createStore` hands each to
 * what needs it (the operations' table fetches each operation's own code after it).
 */
const code = {
  /** What runs batches (`engine/batches.ts`), made for each engine (see `Engine.prepare`). */
  batches: once(() => import('./engine/batches.js')),
  /** The operations' table (each operation's own code is fetched after it). */
  operations: once(() => import('./ops/index.js').then((m) => m.operations)),
  requests: once(() => import('./validation/requests.js')),
  replica: once(() => import('./replica/apply-replica.js')),
  import: once(() => import('./import/import.js')),
  bytes: once(() =>
    Promise.all([import('./attachments/attachment-bytes.js'), opCode('session::get-attachment')]).then(
      ([m]) => m,
    ),
  ),
  cache: once(() => import('./engine/cache.js')),
  ids: once(() => import('./model/ids.js')),
  /** Usage, quota and persistence (`device-storage.ts`): apps that show them fetch it. */
  device: once(() => import('./live/device-storage.js')),
}
/** The device storage code, fetched by the first `requestPersistence()` or `storage$` subscriber. */
const device = (): Promise<typeof import('./live/device-storage.js')> =>
  code.device.load() ?? Promise.resolve(code.device.value!)
/** Fetched with the first call, as the operations that make ids are. */
const defaultId = (kind: IdKind): string => code.ids.value!.defaultId(kind)

/** Fetches the code of function `fn` (the table, then its operation); undefined once it is here. */
function opCode(fn: FunctionId): Promise<unknown> | undefined {
  const ops = code.operations.value
  return ops ? ops[fn].load?.() : code.operations.load()!.then((o) => o[fn].load?.())
}

/** The functions a store answers: looked up on every call (a Set, not a scan of the list). */
const KNOWN_FUNCTIONS: ReadonlySet<string> = new Set(FUNCTION_IDS)
/** A function's method name: `session::set-meta` is `setMeta`, `session::mention::get` is `mentionGet`. */
const methodOf = (fn: string): string =>
  fn.slice(9).replace(/(?:::|-)(.)/g, (_, c: string) => c.toUpperCase())

/** The engine of a store made by `createStore` (for `host.ts`). */
export const engineOf = (store: Store): Engine => store.engine

/** The encryption of each encrypted store (for `host.ts`: the keyring sync seals with). */
const encryptions = new WeakMap<Store, Encryption>()
/** The store's unlocked keyring; null without encryption or while locked. */
export const keyringOf = (store: Store): Keyring | null => encryptions.get(store)?.keyring ?? null
/** Whether the store was created with `encryption` (locked or not). */
export const encryptedOf = (store: Store): boolean => encryptions.has(store)
/** An encrypted store's attachment bytes as kept at rest, unopened; undefined without encryption. */
export const sealedBytesOf = async (
  store: Store,
  session_id: string,
  attachment_id: string,
): Promise<Blob | undefined> => encryptions.get(store)?.sealedBytes(session_id, attachment_id)

const secretOf = (s: Secret): KeySecret => (typeof s === 'string' ? { passphrase: s } : s)

export async function createStore(options: StoreOptions = {}): Promise<Store> {
  let storage = options.storage ?? indexedDbStorage()
  let encryption: Encryption | undefined
  if (options.encryption) {
    // Its own chunk: a store without encryption loads none of it.
    const m = await import('./storage/sealed/encryption.js')
    try {
      encryption = await m.openEncryption(storage, options.encryption)
    } catch (e) {
      storage.close()
      throw e
    }
    storage = encryption.storage
  }
  const limits = options.limits
  const ctx: OpContext = {
    now: options.now ?? Date.now,
    newId: options.newId ?? defaultId,
    limits: {
      default_list_limit: limits?.default_list_limit ?? 50,
      max_list_limit: limits?.max_list_limit ?? 500,
      max_attachment_bytes: limits?.max_attachment_bytes ?? 52_428_800,
    },
  }
  const budget = options.cache
  const maxHeads = options.maxHeads
  if (maxHeads !== undefined && (!Number.isSafeInteger(maxHeads) || maxHeads < 1))
    throw new SessionError('session/invalid_request', 'maxHeads: expected a positive integer')
  if (budget) await code.cache.load()
  const multiTab = (options.multiTab ?? true) && typeof BroadcastChannel !== 'undefined'
  // The batch runner arrives with the operations' table it runs and the write halves of what
  // this store was made with (the storage's, the relay's): one round of fetches before the
  // first write.
  const batches = (): Promise<(engine: Engine) => BatchRunner> =>
    Promise.all([
      code.batches.load() ?? code.batches.value!,
      code.operations.load() ?? code.operations.value!,
      storage.prepare?.(),
      multiTab ? relayCode() : undefined,
    ]).then(
      ([m, operations]) =>
        (e) =>
          new m.BatchRunner(e, operations),
    )
  const engine = new Engine(storage, ctx, batches, {
    cache: budget && ((state) => new code.cache.value!.EntryCache(state, budget.maxBytes, budget.idleMs)),
    ...(maxHeads !== undefined && { maxHeads }),
  })
  await engine.open()
  const bus = new EventBus()
  const live = new LiveQueries(engine)
  // Every commit's events go out through one place, whoever made the commit.
  const eventsSub = engine.commits.subscribe((c) => bus.publish(c.events))
  const relay = (): (() => void) => (multiTab ? startRelay(engine, `colloquy:${storage.name}`) : () => {})
  let stopRelay = relay()
  let closed = false
  let prefetched = Promise.resolve(false)
  if (options.prefetch ?? true) {
    // After the first render's work, off the startup path; a failure is retried on first use.
    // The entries the first live queries load go first: fetching and running a dozen chunks
    // beside that read delays the first result by a third (W4). A framework subscribes a task
    // or two after the store opens (React: in effects after its first commit), hence a second
    // look a little later.
    let done: (all: boolean) => void = () => {}
    prefetched = new Promise((resolve) => (done = resolve))
    const prefetch = (): void => {
      if (closed) return done(false)
      // In this order (`load` is an arrow function: no binding needed).
      const loads = [
        () => engine.prepare(),
        code.requests.load,
        code.ids.load,
        ...FUNCTION_IDS.map((fn) => () => opCode(fn)),
        code.bytes.load,
        code.import.load,
      ]
      void Promise.allSettled(loads.map((load) => load())).then((all) =>
        done(all.every((r) => r.status === 'fulfilled')),
      )
    }
    const after = (ms: number, then: () => void): void =>
      void setTimeout(() => void engine.loads().then(then), ms)
    after(0, () => after(50, prefetch))
  }
  const closedError = (): Promise<never> =>
    Promise.reject(
      locked.value
        ? new SessionError('session/locked', 'the store is locked: unlock it with its passphrase or key')
        : new SessionError('session/storage', 'the store is closed'),
    )
  const locked = new BehaviorSubject(false)
  /** Lets go of every plaintext held in memory (a lock here or in another tab). */
  const dropPlaintext = (): void => {
    locked.next(true)
    // Other tabs' commits (plaintext) are not taken in while locked; the relay starts again on unlock.
    stopRelay()
    stopRelay = () => {}
    for (const id of engine.state.sessions.keys()) engine.cache?.forget(id)
    engine.state.sessions.clear()
    bytes?.revokeAll()
  }
  /** After an unlock: a storage read whole at open is read again (a paged one reads on use). */
  const reload = async (): Promise<void> => {
    if (!engine.state.partial) engine.state.load(await storage.open())
    locked.next(false)
    stopRelay = relay()
    const changes = new Map(
      [...engine.state.sessions.keys()].map((session_id) => [
        session_id,
        { session_id, head: undefined, added: [], updated: [], reloaded: true },
      ]),
    )
    engine.publish('local', changes, [])
  }
  const encrypted = (): Encryption => {
    if (!encryption) throw new SessionError('session/invalid_request', 'this store is not encrypted')
    return encryption
  }
  if (encryption)
    encryption.onRemote = (isLocked) => {
      if (isLocked) dropPlaintext()
      else void reload()
    }
  /** A use by the app (`encryption.lockAfter`); replication and live queries are none. */
  const used = encryption ? encryption.used : () => {}

  // Calls issued in one tick reach the engine together, in issue order, once the code they need
  // is here: they still share one transaction (docs/architecture.md, principle 5) when one of
  // them is the first call of an operation fetched on first use, and nothing issued later
  // overtakes it.
  interface Queued {
    /** Absent when the call fetches nothing (the common case: no promise to wait for). */
    ready?: Promise<boolean>
    error?: unknown
    /** Runs the call, settling the caller's promise itself (no promise in between). */
    go(resolve: (value: never) => void, reject: (error: unknown) => void): void
    resolve(value: never): void
    reject(error: unknown): void
  }
  let queue: Queued[] | undefined
  let submitted: Promise<void> = Promise.resolve()
  const inOrder = <T>(
    fetching: ReadonlyArray<Promise<unknown> | undefined> | undefined,
    go: (resolve: (value: T) => void, reject: (error: unknown) => void) => void,
  ): Promise<T> => {
    if (closed || locked.value) return closedError()
    return new Promise<T>((resolve, reject) => {
      const q: Queued = {
        ready: fetching?.some(Boolean)
          ? Promise.all(fetching).then(
              () => true,
              (e: unknown) => ((q.error = e), false),
            )
          : undefined,
        go: go as Queued['go'],
        resolve: resolve as Queued['resolve'],
        reject,
      }
      if (queue) return void queue.push(q)
      const tick = (queue = [q])
      const before = submitted
      submitted = (async () => {
        await undefined
        queue = undefined
        await before
        if (tick.some((c) => c.ready !== undefined)) await Promise.all(tick.map((c) => c.ready))
        for (const c of tick) {
          if (c.error !== undefined) c.reject(c.error)
          else {
            try {
              c.go(c.resolve, c.reject)
            } catch (e) {
              c.reject(e)
            }
          }
        }
      })()
    })
  }
  /** `inOrder` for work that returns a promise. */
  const later = <T>(
    fetching: ReadonlyArray<Promise<unknown> | undefined>,
    run: () => Promise<T>,
  ): Promise<T> => inOrder<T>(fetching, (resolve, reject) => void run().then(resolve, reject))
  engine.inOrder = (run) => later([], run)

  let bytes: AttachmentBytes | undefined
  let source: AttachmentSource | undefined
  /** The byte side of attachments, made once its code is here. */
  const attachmentBytes = (): AttachmentBytes =>
    (bytes ??= new code.bytes.value!.AttachmentBytes(engine, ctx, () => source))

  /** What a byte read by ids needs here first: its code, the validator's, the engine. */
  const byteReadCode = () => [code.bytes.load(), code.requests.load(), engine.prepare()]
  /**
   * The ids of a byte read that takes them as arguments (`getAttachmentBlob`, `attachmentUrl`),
   * checked as a `session::get-attachment` request's are: refused ids are the validator's
   * `session/invalid_request`, never a lookup.
   */
  const checkedIds = (sid: unknown, aid: unknown): [string, string] => {
    const req = code.requests.value!.parseRequest('session::get-attachment', {
      session_id: sid,
      attachment_id: aid,
    })
    return [req.session_id, req.attachment_id]
  }

  const dispatch = (
    fn: FunctionId,
    request: unknown,
    options: CallOptions | undefined,
    resolve: (value: unknown) => void,
    reject: (error: unknown) => void,
  ): void => {
    try {
      const req = code.requests.value!.parseRequest(fn, request)
      // Attachment bytes are checked and hashed before the batch, and read back after it.
      if (fn === 'session::put-attachment')
        return void attachmentBytes()
          .put(req as Req<'session::put-attachment'>)
          .then(resolve, reject)
      if (fn === 'session::get-attachment')
        return void attachmentBytes()
          .get(req as Req<'session::get-attachment'>)
          .then(resolve, reject)
      // Settled by the engine directly: one promise per call (W2 issues 10,000 in a tick).
      engine.enqueue(fn, req as Req<FunctionId>, options?.guard, resolve, reject)
    } catch (e) {
      reject(e)
    }
  }
  const call = (fn: string, request: unknown, options?: CallOptions): Promise<unknown> => {
    if (closed || locked.value) return closedError()
    used()
    if (!KNOWN_FUNCTIONS.has(fn))
      return Promise.reject(new SessionError('session/invalid_request', `unknown function ${fn}`))
    const id = fn as FunctionId
    const attachment = id === 'session::put-attachment' || id === 'session::get-attachment'
    // Once the code of every call is here (after the first few), no list of fetches to build.
    const here =
      code.requests.value &&
      !engine.prepare() &&
      code.ids.value &&
      !attachment &&
      code.operations.value?.[id].load === undefined
    return inOrder(
      here
        ? undefined
        : [
            opCode(id),
            code.requests.load(),
            engine.prepare(),
            code.ids.load(),
            attachment ? code.bytes.load() : undefined,
          ],
      (resolve, reject) => dispatch(id, request, options, resolve, reject),
    )
  }

  const store = {
    storage,
    engine,
    call,
    on: (type, config) => bus.on(type, config),
    session$: (id) => live.session$(id),
    draft$: (id) => live.draft$(id),
    attachments$: (id) => live.attachments$(id),
    getAttachmentBlob: (sid, aid) => (
      used(),
      later(byteReadCode(), async () => attachmentBytes().blob(...checkedIds(sid, aid)))
    ),
    attachmentUrl: (sid, aid) => (
      used(),
      later(byteReadCode(), async () => attachmentBytes().url(...checkedIds(sid, aid)))
    ),
    // Before the bytes code is here no URL was handed out.
    releaseAttachmentUrl: (sid, aid) => bytes?.release(sid, aid),
    setAttachmentSource(next) {
      source = next
      return () => {
        if (source === next) source = undefined
      }
    },
    sessions$: (req) => live.sessions$(req),
    messages$: (req) => live.messages$(req),
    entry$: (sid, eid) => live.entry$(sid, eid),
    tree$: (sid) => live.tree$(sid),
    branch$: (sid, eid) => live.branch$(sid, eid),
    async selectBranch({ session_id, entry_id }) {
      // The newest leaf under a branch is found from ids, parents and timestamps: an encrypted
      // store's entries may stay sealed for it.
      await engine.ensureHeld(session_id)
      const s = engine.state.sessions.get(session_id)
      // A session holding its entries holds their children too.
      const leaf = s?.entries?.has(entry_id) ? newestLeafUnder(s as Required<typeof s>, entry_id) : entry_id
      return call('session::set-active-leaf', {
        session_id,
        entry_id: leaf,
      }) as Res<'session::set-active-leaf'>
    },
    prefetched,
    requestPersistence: () => device().then((m) => m.requestPersistence()),
    // One reading shared by every subscriber: the device code keeps it per commit stream.
    storage$: defer(device).pipe(switchMap((m) => m.storageOf(engine.commits))),
    importSession: (data, opts) => (
      used(),
      later([code.import.load(), engine.prepare()], () =>
        code.import.value!.importSession(engine, data, opts),
      )
    ),
    beginImport: (id, opts) => (
      used(),
      later([code.import.load(), engine.prepare()], () => code.import.value!.beginImport(engine, id, opts))
    ),
    async flush() {
      for (let s = submitted; ; s = submitted) {
        await s
        if (s === submitted) break
      }
      await engine.flush()
    },
    get closed() {
      return closed
    },
    async lock() {
      const enc = encrypted()
      if (locked.value) return
      await store.flush()
      enc.lock()
      dropPlaintext()
    },
    async unlock(secret) {
      await encrypted().unlock(secretOf(secret))
      if (locked.value) await reload()
    },
    async changePassphrase(current, next) {
      if (locked.value) return closedError()
      await encrypted().changePassphrase(secretOf(current), secretOf(next))
    },
    locked$: locked.pipe(distinctUntilChanged()),
    touch() {
      if (!closed && !locked.value) used()
    },
    async close() {
      if (closed) return
      await store.flush()
      closed = true
      bytes?.revokeAll()
      encryption?.close()
      stopRelay()
      eventsSub.unsubscribe()
      storage.close()
    },
    commits$: engine.commits.asObservable(),
    addCommitHook(hook) {
      engine.hooks.push(hook)
      return () => {
        const i = engine.hooks.indexOf(hook)
        if (i >= 0) engine.hooks.splice(i, 1)
      }
    },
    applyExternal: (source, payload, events) => void engine.applyExternal(source, payload, events),
    applyReplica: (changes, options) =>
      later([code.replica.load(), engine.prepare()], () =>
        code.replica.value!.replicate(engine, ctx, changes, options),
      ),
  } as Store
  if (encryption) {
    encryptions.set(store, encryption)
    encryption.onIdle = () => void store.lock()
  }
  // One method per function id (`append` calls `session::append`).
  for (const fn of FUNCTION_IDS)
    (store as unknown as Record<string, (r: unknown) => Promise<unknown>>)[methodOf(fn)] = (request) =>
      call(fn, request)
  return store
}
