import { BehaviorSubject, Subject, type Observable } from 'rxjs'
import type { AttachmentMeta, ReplicaChange, SessionEntry, SessionMeta, SideWrite, Store } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { parseReplicaChange } from '@colloquy/core/replica'
import { backoffDelay } from './backoff.js'
import { lead } from './leader.js'
import { OUTBOX, coalesce, keyOf, keyed, outboxHook, parentsFirst, sessionOf, type OutboxRecord } from './outbox.js'
import type { SequencedChange } from './protocol.js'
import { TransportError, httpTransport, type Transport } from './transport.js'
import type { Conflict, Rejection, SyncOptions, SyncState, SyncStatus } from './types.js'
import { checkPull, checkPush, checkStream } from './wire.js'

const KV = 'kv'
const CHECKPOINT = 'sync:checkpoint'
const SEEDED = 'sync:seeded'
const EPOCH = 'sync:epoch'
/** Set while a full resync (after a reset answer) has not finished (it restarts from 0): the local leaves before it. */
const RESYNC = 'sync:resync'
const REJECTED = 'sync:rejected:'

export interface Sync {
  start(): void
  stop(): void
  /** Resolves when the outbox is empty and the store has pulled up to the server's head. */
  flush(): Promise<void>
  readonly status$: Observable<SyncStatus>
  readonly conflicts$: Observable<Conflict>
  readonly rejected$: Observable<Rejection>
  /** Rejected changes still stored, oldest first. */
  rejections(): Promise<Rejection[]>
  /** Forgets a rejected change once the app has dealt with it. */
  acknowledge(id: number): Promise<void>
  /** Stops, and stops recording local changes for push (they are then never sent). */
  close(): void
}

type Records = Array<{ key: number; value: OutboxRecord }>

/**
 * Replicates a store with a Colloquy server. Every tab records its local commits in the outbox
 * (same transaction as the commit); one tab per database, the leader, pushes the outbox, pulls
 * from its checkpoint and then follows the live stream. Remote changes go through the store's
 * replica rules, so they fire the same events and live-query updates as local ones.
 */
export function createSync(store: Store, options: SyncOptions): Sync {
  const transport: Transport = options.transport ?? httpTransport(options)
  /** What the store holds in memory (heads, loaded entries): seeding and resync read it. */
  const host = hostOf(store)
  const now = options.now ?? Date.now
  const batchSize = options.batchSize ?? 500
  const pullLimit = options.pullLimit ?? 1000
  const clientId = `c_${Math.random().toString(36).slice(2)}${now().toString(36)}`
  const removeHook = store.addCommitHook(outboxHook(now))
  // Attachments pulled from the server arrive as metadata; their bytes are fetched on first read.
  const download = transport.downloadAttachment?.bind(transport)
  const removeSource = download ? store.setAttachmentSource((session_id, attachment_id) => download(session_id, attachment_id)) : () => {}
  const status = new BehaviorSubject<SyncStatus>({ state: 'offline', pending: 0, leader: false })
  const conflicts = new Subject<Conflict>()
  const rejected = new Subject<Rejection>()
  const channel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel(`colloquy-sync:${store.storage.name}`) : undefined

  let stopLeading: (() => void) | undefined
  // A restarted sync waits for the previous loop to wind down: one loop at a time owns the
  // checkpoint and the in-flight set.
  let lastLoop: Promise<void> = Promise.resolve()
  let leader = false
  let checkpoint = 0
  let head = 0
  let epoch: string | undefined
  /** During a full resync: what the server sent, so that what it lacks can be pushed again. */
  let resync: { sessions: Set<string>; entries: Set<string>; leaves: Map<string, string> } | undefined
  let stream: { close(): void } | undefined
  let streamRefusals = 0
  let wakeUp: (() => void) | undefined
  /**
   * While the loop waits out a failure's backoff, local commits do not cut it short: a streamed
   * reply commits once per chunk, and each would be a request to a server that is down. Going
   * online, the stream and `flush()` still wake it at once.
   */
  let backingOff = false
  let dirty = true
  let flushWaiters: Array<() => void> = []
  // Pulls and stream messages apply one at a time, in order.
  let applying: Promise<void> = Promise.resolve()
  // Outbox records sent and not yet acknowledged: the server has them (or will, before it
  // answers), so server changes arriving meanwhile may be newer than them.
  const inflight = new Set<number>()
  /**
   * Server changes for what an in-flight mutation sets (per key: entry, meta, leaf) wait here
   * until its answer says where the mutation landed in the server's log: an echo of an older
   * change (ours or another device's) arriving meanwhile must not undo the newer one in flight,
   * and one committed after it must still be applied. They are held, not dropped: the
   * checkpoint may pass them meanwhile. Kept in memory only: a device stopped before the answer
   * finds the mutation in its outbox again, not yet sent, and pushes it again; server changes for
   * its key are then shielded as for any unsent change and its push sets the server's value.
   */
  const holding = new Map<string, number>()
  let held: SequencedChange[] = []
  /**
   * Per key, the log position a push answer gave: a server change for that key below it is
   * superseded (a late echo of an older change) and never applied. Forgotten once the
   * checkpoint passes it (no change below it can arrive then).
   */
  const landed = new Map<string, number>()
  /** Bumped by a resync: positions answered from before it are not compared with the new log. */
  let generation = 0

  const setStatus = (patch: Partial<SyncStatus> & { state?: SyncState }): void => {
    const next = { ...status.value, ...patch, leader }
    if (patch.state && patch.state !== 'error') delete (next as { error?: string }).error
    status.next(next)
    if (leader) channel?.postMessage(next)
  }
  if (channel) channel.onmessage = (ev: MessageEvent<SyncStatus>) => void (!leader && status.next({ ...ev.data, leader: false }))

  const wake = (): void => {
    dirty = true
    wakeUp?.()
  }
  const isOffline = (): boolean => typeof navigator !== 'undefined' && navigator.onLine === false
  // Both directions wake the loop: online to retry at once, offline to pause and say so.
  const onOnline = (): void => wake()
  if (typeof addEventListener === 'function') {
    addEventListener('online', onOnline)
    addEventListener('offline', onOnline)
  }

  const outbox = async (): Promise<Records> => ((await store.storage.sideRecords?.(OUTBOX)) ?? []) as Records
  const kv = async (): Promise<Map<string, unknown>> => new Map(((await store.storage.sideRecords?.(KV)) ?? []).map((r) => [String(r.key), r.value]))
  const refreshPending = async (): Promise<void> => setStatus({ pending: (await outbox()).length })

  // Local commits (this tab's or, through the relay, another tab's) mean new outbox records.
  const commitsSub = store.commits$.subscribe((c) => {
    if (c.source === 'remote') return
    if (!leader) void refreshPending()
    else if (backingOff) dirty = true
    else wake()
  })

  /** Queues every session this store already held before sync first ran. */
  async function seed(): Promise<void> {
    if ((await kv()).has(SEEDED)) return
    const side: SideWrite[] = []
    const all: SessionMeta[] = []
    let cursor: string | undefined
    do {
      const page = await store.list({ limit: 500, order: 'created_asc', cursor })
      all.push(...page.sessions)
      cursor = page.next_cursor
    } while (cursor)
    for (const meta of all) {
      side.push(record({ type: 'meta', meta, create: true }))
      await host.load(meta.session_id)
      const leaf = host.head(meta.session_id)?.leaf
      for (const entry of parentsFirst(host.entries(meta.session_id)?.values() ?? [])) side.push(record({ type: 'entry', session_id: meta.session_id, entry, base_revision: null }))
      if (leaf) side.push(record({ type: 'leaf', session_id: meta.session_id, entry_id: leaf }))
    }
    side.push({ store: KV, key: SEEDED, value: true })
    await store.applyReplica([], { policy: 'pull', side })
  }
  const record = (change: ReplicaChange): SideWrite => ({ store: OUTBOX, value: { change, at: now() } satisfies OutboxRecord })

  async function pushAll(signal: AbortSignal): Promise<void> {
    for (;;) {
      const records = await outbox()
      setStatus({ pending: records.length })
      if (!records.length || signal.aborted) return
      const batch = coalesce(records.slice(0, batchSize))
      for (const m of batch) {
        for (const id of m.ids) inflight.add(id)
        const k = keyed(m.change)
        if (k !== undefined) holding.set(k, (holding.get(k) ?? 0) + 1)
      }
      try {
        await pushBatch(batch)
      } finally {
        inflight.clear()
        // Not answered (the answer was lost, the push failed): what was held is applied as it
        // would have been without holding. The retry's answer guards what arrives after it.
        if (holding.size) {
          holding.clear()
          await serially(async () => {
            const { list, keep } = release()
            if (list.length) await store.applyReplica(withoutPending(list, await outbox()), { policy: 'pull' })
            held = keep
          })
        }
      }
    }
  }

  /**
   * Pushes a batch in outbox order, uploading each attachment's bytes at its place: after the
   * changes before it (its session exists on the server), before the changes after it (a
   * message referencing it). The attachment change itself rides in the next push (answered
   * `unchanged` once the upload put it there, or rejected if the upload was refused).
   */
  async function pushBatch(batch: ReturnType<typeof coalesce>): Promise<void> {
    let start = 0
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i].change
      if (c.type !== 'attachment') continue
      if (i > start) await pushJson(batch.slice(start, i))
      start = i
      await upload(c.session_id, c.attachment)
    }
    await pushJson(batch.slice(start))
  }

  async function pushJson(batch: ReturnType<typeof coalesce>): Promise<void> {
    if (!batch.length) return
    const ids = batch.map(({ id }) => id)
    const sentIn = generation
    const { results } = checkPush(await transport.push({ client_id: clientId, mutations: batch.map(({ id, change }) => ({ id, change })) }), ids)
    // After the changes applied before it, before any after it: the held ones are sorted in order.
    return serially(() => settle(batch, results, sentIn))
  }

  async function settle(batch: ReturnType<typeof coalesce>, results: ReturnType<typeof checkPush>['results'], sentIn: number): Promise<void> {
    const byId = new Map(results.map((r) => [r.id, r]))
    const side: SideWrite[] = []
    const resolutions: ReplicaChange[] = []
    const settled: Conflict[] = []
    const refused: Rejection[] = []
    for (const m of batch) if (!byId.has(m.id)) throw new TransportError(`push response lacks mutation ${m.id}`, true)
    for (const m of batch) {
      const r = byId.get(m.id)!
      const k = keyed(m.change)
      if (k !== undefined) {
        const n = (holding.get(k) ?? 1) - 1
        if (n > 0) holding.set(k, n)
        else holding.delete(k)
        if (r.seq !== undefined && sentIn === generation) landed.set(k, Math.max(landed.get(k) ?? 0, r.seq))
      }
      for (const id of m.ids) side.push({ store: OUTBOX, key: id, value: undefined })
      if (r.status === 'conflict' && m.change.type === 'entry') {
        const c = await resolve(m.change.session_id, m.change.entry, r.current)
        resolutions.push({ type: 'entry', session_id: c.session_id, entry: c.resolved })
        side.push(record({ type: 'entry', session_id: c.session_id, entry: c.resolved, base_revision: r.current.revision }))
        settled.push(c)
      } else if (r.status === 'rejected' || r.status === 'conflict') {
        const rejection: Rejection = { id: m.id, change: m.change, code: r.status === 'rejected' ? r.code : 'session/invalid_request', message: r.status === 'rejected' ? r.message : 'conflict', at: now() }
        side.push({ store: KV, key: `${REJECTED}${m.id}`, value: rejection })
        refused.push(rejection)
      }
    }
    // Held server changes this answer settles: those at or past where the mutation landed (the
    // server's newer value), never the older ones. A local change not yet sent still shields.
    // Before the resolutions, which are written above the server's version.
    const { list: released, keep } = release()
    const list = released.length ? withoutPending(released, await outbox()) : []
    await store.applyReplica([...list, ...resolutions], { policy: 'pull', side })
    held = keep
    for (const c of settled) conflicts.next(c)
    for (const r of refused) rejected.next(r)
  }

  async function upload(session_id: string, attachment: AttachmentMeta): Promise<void> {
    if (!transport.uploadAttachment) throw new TransportError('this transport cannot upload attachments', false)
    const bytes = await store.getAttachmentBlob(session_id, attachment.attachment_id)
    // Deleted here since: its detach follows in the outbox; the push answers for it.
    if (!bytes) return
    try {
      await transport.uploadAttachment(session_id, attachment, bytes)
    } catch (e) {
      // Refused for good (no such session any more, too large): the push records the rejection.
      if (!(e instanceof TransportError && !e.retryable) && !(e instanceof Error && (e as { retryable?: boolean }).retryable === false)) throw e
    }
  }

  async function resolve(session_id: string, pushed: SessionEntry, server: SessionEntry): Promise<Conflict> {
    const local = (await store.getMessage({ session_id, entry_id: pushed.id }))?.entry ?? pushed
    const chosen = local.kind === 'message' && server.kind === 'message' ? await options.resolveConflict?.({ session_id, entry_id: pushed.id, local, server }) : undefined
    const base = chosen && server.kind === 'message' ? { ...server, message: chosen } : server
    // Written above both versions, so neither replica's revision ever goes down.
    const resolved = { ...base, revision: Math.max(local.revision, server.revision) + 1 } as SessionEntry
    return { session_id, entry_id: pushed.id, local, server, resolved }
  }

  /**
   * Server changes minus those that a local change not yet sent supersedes: that change will
   * reach the server after them and come back. Changes already sent do not shield anything.
   */
  function withoutPending(changes: readonly SequencedChange[], records: Records): ReplicaChange[] {
    const pending = new Set<string>()
    const deleting = new Set<string>()
    for (const { key, value: { change: c } } of records) {
      // A local attachment change not yet acknowledged, sent or not (its bytes may still be on
      // their way): an older server record of the same attachment, or a whole list (a server
      // that sends lists), may not have it yet and must not undo it here.
      if (c.type === 'attachment' || c.type === 'detach') {
        pending.add(keyOf(c))
        pending.add(keyOf({ type: 'attachments', session_id: c.session_id, attachments: [] }))
        continue
      }
      if (inflight.has(key)) continue
      if (c.type === 'delete') deleting.add(c.session_id)
      else pending.add(keyOf(c))
    }
    return changes
      .map((s) => s.change)
      .filter((c) => (c.type === 'delete' ? true : deleting.has(sessionOf(c)) ? false : !pending.has(keyOf(c))))
  }


  /**
   * Held changes whose keys no longer wait for an answer (`list`): those not superseded by where
   * a mutation of ours landed, in log order. `keep`: the others still waiting, to become `held`
   * once `list` is written (a failed write leaves everything held).
   */
  function release(): { list: SequencedChange[]; keep: SequencedChange[] } {
    const list: SequencedChange[] = []
    const keep: SequencedChange[] = []
    for (const h of held) {
      const k = keyed(h.change)!
      if (holding.has(k)) keep.push(h)
      else if (h.seq >= (landed.get(k) ?? 0)) list.push(h)
    }
    return { list, keep }
  }

  /** Runs after the applies and answers queued before it, before any queued after it. */
  function serially<T>(fn: () => Promise<T>): Promise<T> {
    const p = applying.then(fn)
    applying = p.then(
      () => {},
      () => {},
    )
    return p
  }

  /** Applies server changes after the checkpoint, and moves the checkpoint, in one transaction. */
  function apply(changes: readonly SequencedChange[], to: number): Promise<void> {
    const run = async (): Promise<void> => {
      const fresh = changes.filter((c) => c.seq > checkpoint)
      const next = Math.max(checkpoint, to)
      if (!fresh.length && next === checkpoint) return
      const live: SequencedChange[] = []
      // Taken over once written: a failed apply leaves `held` as it was.
      let hold = held.slice()
      for (const s of fresh) {
        const c = s.change
        const k = keyed(c)
        if (c.type === 'delete') hold = hold.filter((h) => sessionOf(h.change) !== c.session_id)
        if (k === undefined) live.push(s)
        // Older than a change of ours the server already answered for: superseded.
        else if (s.seq < (landed.get(k) ?? 0)) continue
        else if (holding.has(k)) {
          // Checked now as applying it would (core's one validator): a hostile change fails
          // this apply with the checkpoint untouched, rather than being kept past it.
          hold.push({ seq: s.seq, change: parseReplicaChange(c, `changes[seq ${s.seq}]`) })
        } else live.push(s)
      }
      const list = withoutPending(live, live.length ? await outbox() : [])
      const side: SideWrite[] = [{ store: KV, key: CHECKPOINT, value: next }]
      if (epoch !== undefined) side.push({ store: KV, key: EPOCH, value: epoch })
      await store.applyReplica(list, { policy: 'pull', side })
      held = hold
      checkpoint = next
      for (const [k, seq] of landed) if (seq <= checkpoint && !holding.has(k)) landed.delete(k)
      if (options.eagerAttachments) {
        // Read once now, so the bytes are here before the device goes offline.
        for (const c of list) if (c.type === 'attachment') void store.getAttachmentBlob(c.session_id, c.attachment.attachment_id).catch(() => {})
      }
    }
    return serially(run)
  }

  async function pullAll(signal: AbortSignal): Promise<void> {
    for (;;) {
      const page = checkPull(await transport.pull(checkpoint, pullLimit, epoch), checkpoint)
      if (page.reset) {
        await beginResync(page.epoch)
        continue
      }
      if (page.epoch !== undefined) epoch = page.epoch
      head = Math.max(head, page.head)
      if (resync) for (const c of page.changes) noteServer(c.change)
      await apply(page.changes, page.checkpoint)
      if (signal.aborted) return
      if (!page.more) break
    }
    if (resync) await finishResync()
  }

  /**
   * The server cannot continue from this checkpoint (it forgot that far back, it is another
   * database, or it is behind us: restored from a backup). Start over from 0, keeping the
   * outbox; what the server turns out to lack is pushed again once the pull is through.
   */
  function beginResync(next: string | undefined): Promise<void> {
    closeStream()
    // A second reset (the stream's and a pull's) restarts the pull, not the local snapshot.
    const leaves = resync?.leaves ?? localLeaves()
    const run = async (): Promise<void> => {
      epoch = next
      // The log starts over: what was held comes again, positions answered before mean nothing.
      generation++
      held = []
      landed.clear()
      resync = { sessions: new Set(), entries: new Set(), leaves }
      head = 0
      const side: SideWrite[] = [
        { store: KV, key: CHECKPOINT, value: 0 },
        { store: KV, key: EPOCH, value: next },
        // The local leaves as they were, kept until the resync ends (a restart resumes it).
        { store: KV, key: RESYNC, value: [...leaves] },
      ]
      await store.applyReplica([], { policy: 'pull', side })
      checkpoint = 0
    }
    return serially(run)
  }

  /** The local active leaves before a resync's pull moves them to the server's. */
  function localLeaves(): Map<string, string> {
    const out = new Map<string, string>()
    for (const head of host.heads()) if (head.leaf) out.set(head.meta.session_id, head.leaf)
    return out
  }

  function noteServer(c: ReplicaChange): void {
    if (c.type === 'meta') resync!.sessions.add(c.meta.session_id)
    else if (c.type === 'entry') {
      resync!.sessions.add(c.session_id)
      resync!.entries.add(`${c.session_id}\u0000${c.entry.id}`)
    } else if (c.type === 'delete') resync!.sessions.delete(c.session_id)
  }

  /** Queues what this store holds and the server did not send: sessions and entries it lost. */
  async function finishResync(): Promise<void> {
    const seen = resync!
    const side: SideWrite[] = []
    for (const { meta } of host.heads()) {
      const id = meta.session_id
      const known = seen.sessions.has(id)
      await host.load(id)
      const held = host.head(id)
      if (!held) continue
      if (!known) side.push(record({ type: 'meta', meta, create: true }))
      for (const entry of parentsFirst(host.entries(id)?.values() ?? [])) {
        if (!known || !seen.entries.has(`${id}\u0000${entry.id}`)) side.push(record({ type: 'entry', session_id: id, entry, base_revision: null }))
      }
      // A leaf on an entry the server lacked is newer than the server's: it goes back too.
      const leaf = known ? seen.leaves.get(id) : held.leaf
      if (leaf && (!known || !seen.entries.has(`${id}\u0000${leaf}`))) side.push(record({ type: 'leaf', session_id: id, entry_id: leaf }))
    }
    side.push({ store: KV, key: RESYNC, value: undefined })
    await store.applyReplica([], { policy: 'pull', side })
    resync = undefined
    // Push what was queued before going live.
    dirty = true
  }

  function openStream(): void {
    if (stream) return
    stream = transport.stream(
      checkpoint,
      (frame: unknown) => {
        const m = checkStream(frame)
        // A refused or malformed frame: drop this connection and come back through the loop
        // (pull, then a new stream), as for any other stream failure.
        if (m instanceof TransportError) {
          closeStream()
          setStatus({ state: 'error', error: m.message })
          setTimeout(wake, backoffDelay(++streamRefusals))
          return
        }
        head = Math.max(head, m.head)
        if (m.type === 'reset') {
          void beginResync(m.epoch).then(wake, wake)
          return
        }
        if (m.type === 'ready') {
          streamRefusals = 0
          if (m.checkpoint !== undefined) void apply([], m.checkpoint).catch(() => wake())
          return
        }
        // A gap (changes this connection skipped): drop the connection, pull from the
        // checkpoint and reopen, rather than trusting anything more it says.
        if (m.prev > checkpoint) {
          closeStream()
          return wake()
        }
        const last = m.checkpoint ?? (m.changes.length ? m.changes[m.changes.length - 1].seq : m.prev)
        apply(m.changes, last).then(
          () => setStatus({ last_synced_at: now() }),
          () => wake(),
        )
      },
      (error) => {
        stream = undefined
        if (!error) return
        // Refused for too many sockets: come back later, not at once (reset once a stream is ready).
        if (error instanceof TransportError && error.status === 429) setTimeout(wake, backoffDelay(++streamRefusals))
        else wake()
      },
      epoch,
    )
  }

  function closeStream(): void {
    stream?.close()
    stream = undefined
  }

  /** Waits `ms`, or until woken (new local changes, `online`) when `wakeable`, or stopped. */
  const pause = (ms: number, signal: AbortSignal, wakeable = true): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        if (wakeUp === done) wakeUp = undefined
        signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = ms === Infinity ? undefined : setTimeout(done, ms)
      if (wakeable) wakeUp = done
      signal.addEventListener('abort', done)
    })

  async function leadLoop(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return
    leader = true
    const state = await kv()
    checkpoint = Number(state.get(CHECKPOINT) ?? 0)
    epoch = typeof state.get(EPOCH) === 'string' ? (state.get(EPOCH) as string) : undefined
    // A resync cut short starts again from the beginning.
    const pending = state.get(RESYNC)
    if (pending) {
      checkpoint = 0
      resync = { sessions: new Set(), entries: new Set(), leaves: resync?.leaves ?? new Map(Array.isArray(pending) ? (pending as Array<[string, string]>) : []) }
    }
    let failures = 0
    let synced = false
    while (!signal.aborted) {
      if (isOffline()) {
        closeStream()
        setStatus({ state: 'offline' })
        await pause(Infinity, signal)
        continue
      }
      try {
        dirty = false
        setStatus({ state: synced ? 'syncing' : 'connecting' })
        await seed()
        await pushAll(signal)
        await pullAll(signal)
        openStream()
        failures = 0
        synced = true
        if (!dirty) {
          setStatus({ state: 'idle', last_synced_at: now(), pending: (await outbox()).length })
          for (const done of flushWaiters.splice(0)) done()
          await pause(Infinity, signal)
        }
      } catch (e) {
        if (signal.aborted) break
        closeStream()
        const fatal = e instanceof TransportError && !e.retryable
        // A server that says when to come back (429, 503 with Retry-After) is taken at its word,
        // plus jitter so throttled clients do not return in lockstep, rather than growing the
        // backoff. The outbox is left as it is and pushed again then.
        const asked = e instanceof TransportError && e.retryable ? e.retryAfterMs : undefined
        if (asked === undefined) failures++
        setStatus({ state: isOffline() ? 'offline' : 'error', error: e instanceof Error ? e.message : String(e) })
        const delay = asked !== undefined ? Math.max(asked, 250) + Math.random() * Math.min(asked, 1000) : fatal ? Math.max(backoffDelay(failures), 30_000) : backoffDelay(failures)
        // Told when to come back: going online does not cut that wait short either.
        backingOff = true
        await pause(delay, signal, asked === undefined)
        backingOff = false
      }
    }
    closeStream()
    leader = false
  }

  void refreshPending()
  const sync: Sync = {
    start() {
      if (stopLeading) return
      stopLeading = lead(`colloquy-sync:${store.storage.name}`, (signal) => {
        const previous = lastLoop
        const loop = previous.then(() => leadLoop(signal))
        lastLoop = loop.catch(() => {})
        return loop
      })
    },
    stop() {
      stopLeading?.()
      stopLeading = undefined
      closeStream()
      if (leader) setStatus({ state: 'offline' })
    },
    async flush() {
      if (!stopLeading) throw new Error('sync is not started')
      for (;;) {
        if (leader) {
          const done = new Promise<void>((r) => flushWaiters.push(r))
          wake()
          await done
          await applying
          if (!(await outbox()).length && checkpoint >= head) return
        } else {
          // Another tab replicates: wait until it has pushed everything.
          if (!(await outbox()).length && status.value.state === 'idle') return
          await new Promise((r) => setTimeout(r, 50))
        }
      }
    },
    status$: status.asObservable(),
    conflicts$: conflicts.asObservable(),
    rejected$: rejected.asObservable(),
    async rejections() {
      const out: Rejection[] = []
      for (const [k, v] of await kv()) if (k.startsWith(REJECTED)) out.push(v as Rejection)
      return out.sort((a, b) => a.id - b.id)
    },
    async acknowledge(id) {
      await store.applyReplica([], { policy: 'pull', side: [{ store: KV, key: `${REJECTED}${id}`, value: undefined }] })
    },
    close() {
      sync.stop()
      removeHook()
      removeSource()
      commitsSub.unsubscribe()
      channel?.close()
      if (typeof removeEventListener === 'function') {
        removeEventListener('online', onOnline)
        removeEventListener('offline', onOnline)
      }
    },
  }
  return sync

}
