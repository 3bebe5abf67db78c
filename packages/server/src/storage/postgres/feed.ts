import type {
  AttachmentMeta,
  EventEnvelope,
  JsonObject,
  ReplicaChange,
  SessionEntry,
  SessionHead,
  SessionMeta,
  Storage,
} from '@colloquy/core'
import { metadataMatches, type StoreHost } from '@colloquy/core/host'
import type pg from 'pg'
import { changeSession } from '@colloquy/core'
import { PageBuilder, type ChangeFeed, type EncodedPage } from '../../changes/change-feed.js'
import { WORK_BUDGETS } from '../../work.js'
import type { CommittedChange } from '../../changes/change-log.js'
import { recordKeysFor, type ChangeKind } from '../../changes/change-index.js'
import { fromDb, headOf, toDb } from './codec.js'

export const CHANNEL = 'colloquy_changes'

interface Row {
  /** The session exists (its meta may be left out of a pull page's entry rows). */
  live: boolean
  seq: string
  kind: ChangeKind
  session_id: string
  entry_id: string | null
  attachment_id: string | null
  attachments: AttachmentMeta[] | null
  metadata: JsonObject | null
  meta: SessionMeta | null
  leaf: string | null
  v: string | null
  entry: SessionEntry | null
}

interface Clock {
  head: number
  floor: number
  epoch: string
}

// Each record with the current state of what it names (one statement: one snapshot). The live
// reader needs every row's session (scope, heads to fold); a pull page only the meta of meta
// rows: parsing a session's meta again for each of its entries would dominate a page.
const rows = (
  allMeta: boolean,
): string => `SELECT s.id IS NOT NULL AS live, c.seq, c.kind, c.session_id, c.entry_id, c.attachment_id, c.metadata,
  ${allMeta ? 's.meta, s.attachments' : 'CASE WHEN c.entry_id IS NULL THEN s.meta END AS meta, CASE WHEN c.attachment_id IS NOT NULL THEN s.attachments END AS attachments'}, s.leaf, s.v, e.entry
  FROM colloquy_changes c
  LEFT JOIN colloquy_sessions s ON s.id = c.session_id
  LEFT JOIN colloquy_entries e ON c.entry_id IS NOT NULL AND e.session_id = c.session_id AND e.id = c.entry_id`
const ROWS = rows(true)
const PAGE_ROWS = rows(false)

/**
 * Positions a feed keeps of its own last commits (a push asks right after its commit; a push
 * carries at most `maxBatch`, 1,000 by default): about a megabyte at most.
 */
const LANDED_KEYS = 16_384

/**
 * What a change sets, as the records carrying it share it (`recordKeysFor`: a session's
 * creation and meta, an entry's addition and updates, the leaf); undefined for the others.
 */
const landedKey = (c: ReplicaChange): string | undefined =>
  c.type === 'entry' ? `e${c.entry.id}` : c.type === 'meta' ? 'm' : c.type === 'leaf' ? 'l' : undefined

/** Records the live reader reads at once. */
const PAGE = 1000

/**
 * The live reader's one statement: the clock, then the records after `$1` up to the head and
 * `$2`, each with the current state of what it names (none: one row of the clock alone), and
 * the events instances other than `$3` stored with commits in that range (when `$4`), as
 * `[seq, events]` pairs on every row (the reader keeps those within what it delivers).
 */
const READ = `WITH k AS (SELECT head, epoch || '.' || (SELECT oid FROM pg_database WHERE datname = current_database()) AS epoch FROM colloquy_clock WHERE id = 1),
  r AS (${ROWS} WHERE c.seq > $1 AND c.seq <= LEAST((SELECT head FROM k), $2::bigint) ORDER BY c.seq LIMIT ${PAGE}),
  ev AS (SELECT json_agg(json_build_array(seq, events) ORDER BY seq) AS events FROM colloquy_events
         WHERE $4::boolean AND seq > $1 AND seq <= LEAST((SELECT head FROM k), $2::bigint) AND origin <> $3)
  SELECT k.head AS clock_head, k.epoch AS clock_epoch, ev.events, r.* FROM k CROSS JOIN ev LEFT JOIN r ON true ORDER BY r.seq`

type ReadRow = Partial<Row> & {
  seq: string | null
  clock_head: string
  clock_epoch: string
  events: Array<[number, EventEnvelope[]]> | null
}

/**
 * The change log as the database holds it, read by every instance. Pull pages are read straight
 * from it. For the live streams, one reader per instance follows the log from the last `seq` it
 * delivered: woken by its own commits, by `NOTIFY` from other instances (a hint carrying only a
 * head), after its listening connection is re-established, and by a safety poll, so a lost
 * notification delays a change and never loses it. What other instances committed is also folded
 * into this instance's engine, so its cached sessions follow.
 */
export class PostgresFeed implements ChangeFeed {
  head = 0
  epoch = ''
  /** How many times the listening connection has been (re-)established (tests read it). */
  listens = 0
  private seen = 0
  /**
   * The `seq` of the record this instance's commits last wrote for what a change sets (by
   * `landedKey`), per session, for the sessions written last (`LANDED_KEYS` in all): a push's
   * answer reads it.
   */
  private readonly landed = new Map<string, Map<string, number>>()
  private landedKeys = 0
  /** This instance's commits not yet delivered, by their first `seq`. */
  private readonly own = new Map<number, { head: number; changes: readonly CommittedChange[] }>()
  /**
   * The first `seq` of this instance's commits that took their sequence numbers and have not
   * ended yet (`landing`): the reader reads only below them, and delivers them from memory
   * once they commit. (Read from the log instead, a 1,000-change commit whose COMMIT reply came
   * after the next commit's, or after the poll's read, was read back whole, its heads and
   * entries decoded and folded into the engine that already held them.)
   */
  private readonly landing = new Set<number>()
  /** A read of the log is due (a notification, the poll, a new listening connection). */
  private due = false
  private host?: StoreHost
  private readonly listeners = new Set<(changes: readonly CommittedChange[], head: number) => void>()
  private pumping: Promise<void> | undefined
  private again = false
  private closed = false
  private timer: NodeJS.Timeout | undefined
  private listener: pg.PoolClient | undefined
  private retry = 100

  constructor(
    readonly storage: Storage,
    private readonly pool: pg.Pool,
    private readonly options: { pollMs: number; warn: (m: string) => void; origin: string },
  ) {}

  attach(host: StoreHost): void {
    this.host = host
  }

  subscribe(listener: (changes: readonly CommittedChange[], head: number) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async start(): Promise<void> {
    const clock = await this.clock()
    this.head = this.seen = clock.head
    this.epoch = clock.epoch
    await this.listen()
    this.timer = setInterval(() => void this.poke(true), this.options.pollMs)
    this.timer.unref()
  }

  /**
   * A commit of this instance took the `seq`s from `first` on (it holds the clock row until it
   * ends, so no commit after it is visible before it ends): read nothing from there until it
   * ends, with `committed`, or `abandoned` when its outcome is not known here.
   */
  took(first: number): void {
    this.landing.add(first)
  }

  /**
   * A commit of this instance that took `seq`s ended without being known committed (rolled
   * back, or its connection lost around COMMIT): whatever it left is read from the log.
   */
  abandoned(first: number): void {
    if (this.landing.delete(first)) void this.poke(true)
  }

  /**
   * After a commit of this instance (its `NOTIFY` went with the COMMIT): its records, as written,
   * are delivered from memory when the reader reaches them; only what other instances committed
   * is read back from the database.
   */
  committed(changes: readonly CommittedChange[]): void {
    for (const { seq, change } of changes) {
      const id = changeSession(change)
      const held = this.landed.get(id)
      if (change.type === 'delete') {
        if (held) {
          this.landed.delete(id)
          this.landedKeys -= held.size
        }
        continue
      }
      const what = landedKey(change)
      if (what === undefined) continue
      // The session moves to the newest end; the oldest go past the bound.
      const s = held ?? new Map<string, number>()
      if (held) this.landed.delete(id)
      this.landed.set(id, s)
      if (!s.has(what)) this.landedKeys++
      s.set(what, seq)
      while (this.landedKeys > LANDED_KEYS) {
        const [oldest, keys] = this.landed.entries().next().value!
        this.landed.delete(oldest)
        this.landedKeys -= keys.size
      }
    }
    const first = changes[0].seq
    const head = changes[changes.length - 1].seq
    this.landing.delete(first)
    if (head > this.head) this.head = head
    if (head > this.seen) this.own.set(first, { head, changes })
    void this.poke()
  }

  close(): void {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    const l = this.listener
    this.listener = undefined
    l?.release(true)
  }

  /**
   * Where each change stands in the log. A change this instance's own commit wrote (a push's
   * applied changes, asked right after their commit) is answered from memory: the record that
   * commit wrote, at or after the push's change. Only the others cost a query.
   */
  async positions(changes: readonly ReplicaChange[]): Promise<Array<number | undefined>> {
    const known = changes.map((c) => {
      const what = landedKey(c)
      return what === undefined ? undefined : this.landed.get(changeSession(c))?.get(what)
    })
    const rest = changes.filter((_, i) => known[i] === undefined)
    if (rest.length === 0) return known
    const read = await this.readPositions(rest)
    let n = 0
    return known.map((seq) => seq ?? read[n++])
  }

  private async readPositions(changes: readonly ReplicaChange[]): Promise<Array<number | undefined>> {
    const keys = changes.map((c) => recordKeysFor(c).map(toDb))
    const all = [...new Set(keys.flat())]
    if (!all.length) return changes.map(() => undefined)
    const rows = (
      await this.pool.query<{ key: string; seq: string }>(
        'SELECT key, seq FROM colloquy_changes WHERE key = ANY($1)',
        [all],
      )
    ).rows
    const seq = new Map(rows.map((r) => [r.key, Number(r.seq)]))
    return keys.map((ks) => {
      const found = ks.map((k) => seq.get(k)).filter((n): n is number => n !== undefined)
      return found.length ? Math.max(...found) : undefined
    })
  }

  async page(since: number, limit: number, filter?: JsonObject, epoch?: string): Promise<EncodedPage> {
    const clock = await this.clock()
    if (
      (epoch !== undefined && epoch !== clock.epoch) ||
      since > clock.head ||
      (since > 0 && since < clock.floor)
    ) {
      return { changes: [], checkpoint: 0, head: clock.head, more: true, epoch: clock.epoch, reset: true }
    }
    // The tenancy filter is an indexed column; any other filter is applied here.
    const owner =
      filter && Object.keys(filter).length === 1 && typeof filter.owner === 'string'
        ? filter.owner
        : undefined
    const rest = owner === undefined ? filter : undefined
    // Rows stop once those before them hold a page's worth of JSON (`pullChars`): the rest are
    // neither sent by the database nor decoded here (a page from 0 at 5,000 would decode every
    // one of 5,000 large metas to keep a hundred).
    const rows = (
      await this.pool.query<Row & { fetched: string }>(
        `SELECT * FROM (SELECT p.*, count(*) OVER () AS fetched, coalesce(sum(coalesce(octet_length(p.meta::text), 0) + coalesce(octet_length(p.entry::text), 0) + coalesce(octet_length(p.attachments::text), 0))
           OVER (ORDER BY p.seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
         FROM (${rest ? ROWS : PAGE_ROWS} WHERE c.seq > $1 AND c.seq <= $2 ${owner !== undefined ? 'AND c.owner = $4' : ''} ORDER BY c.seq LIMIT $3) p) q
         WHERE q.before < ${WORK_BUDGETS.pullChars} ORDER BY q.seq`,
        [since, clock.head, limit + 1, ...(owner !== undefined ? [owner] : [])],
      )
    ).rows
    // Cut by size: the page ends at the last row read, and the rest follow.
    const cut = rows.length > 0 && rows.length < Number(rows[0].fetched)
    const more = cut || rows.length > limit
    const kept = rows.length > limit ? rows.slice(0, limit) : rows
    const page = new PageBuilder()
    for (const r of kept) {
      await page.turn()
      const c = changeOf(r)
      if (
        c &&
        (!rest || metadataMatches(rest, metadataOf(r))) &&
        !page.add({ seq: Number(r.seq), change: c })
      ) {
        return {
          changes: page.changes,
          encoded: page.encoded,
          checkpoint: page.changes[page.changes.length - 1]!.seq,
          head: clock.head,
          more: true,
          epoch: clock.epoch,
        }
      }
    }
    return {
      changes: page.changes,
      encoded: page.encoded,
      checkpoint: more ? Number(kept[kept.length - 1].seq) : clock.head,
      head: clock.head,
      more,
      epoch: clock.epoch,
    }
  }

  private async clock(): Promise<Clock> {
    // The epoch names the database too: a copy or logical restore into another database (a new
    // oid) is another log, even though it holds the same clock row.
    const r = (
      await this.pool.query<{ head: string; floor: string; epoch: string }>(
        "SELECT head, floor, epoch || '.' || (SELECT oid FROM pg_database WHERE datname = current_database()) AS epoch FROM colloquy_clock WHERE id = 1",
      )
    ).rows[0]
    const clock = { head: Number(r.head), floor: Number(r.floor), epoch: r.epoch }
    if (clock.head > this.head) this.head = clock.head
    return clock
  }

  /**
   * Delivers what is due: this instance's commits that continue the log, and with `read`, the
   * log up to its head (calls made meanwhile are folded into one more round).
   */
  poke(read = false): Promise<void> {
    if (read) this.due = true
    if (this.closed) return Promise.resolve()
    if (this.pumping) {
      this.again = true
      return this.pumping
    }
    this.pumping = (async () => {
      try {
        do {
          this.again = false
          await this.catchUp()
        } while (this.again && !this.closed)
      } catch (e) {
        this.options.warn(`reading the change log failed (retried by the poll): ${(e as Error).message}`)
      } finally {
        this.pumping = undefined
      }
    })()
    return this.pumping
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      this.deliverOwn()
      // Another instance's commits below one of ours are read before it is delivered.
      const next = this.nextOwn()
      if (!this.due && next === undefined) return
      // A read bounded by this instance's next commit leaves a due read for after it.
      if (next === undefined) this.due = false
      // One statement (one snapshot, one round trip): the clock, the records after `seen` up to
      // the head (and below this instance's next commit, which is delivered from memory), and
      // the events other instances stored with them.
      const bound = next === undefined ? Number.MAX_SAFE_INTEGER : next - 1
      const rows = (
        await this.pool.query<ReadRow>(READ, [this.seen, bound, this.options.origin, this.host !== undefined])
      ).rows
      const clock = rows[0]
      const head = Number(clock.clock_head)
      if (head > this.head) this.head = head
      if (clock.clock_epoch !== this.epoch) {
        this.options.warn(
          `the database was replaced (epoch ${this.epoch} → ${clock.clock_epoch}): following the new one`,
        )
        this.epoch = clock.clock_epoch
        this.seen = Math.min(this.seen, head)
        this.own.clear()
        this.due = true
        continue
      }
      const found = clock.seq === null ? [] : (rows as Row[])
      const full = found.length === PAGE
      const upto = full ? Number(found[found.length - 1].seq) : Math.min(head, bound)
      // Nothing more to read (the head is where this instance already is).
      if (upto <= this.seen && !found.length) return
      // Other instances' events of these commits, fired here as a local commit fires them.
      const events = (clock.events ?? [])
        .filter(([seq]) => seq > this.seen && seq <= upto)
        .flatMap(([, e]) => e)
      this.fold(found, events)
      const changes: CommittedChange[] = []
      for (const r of found) {
        const change = changeOf(r)
        if (change) changes.push({ seq: Number(r.seq), change, metadata: metadataOf(r) })
      }
      this.seen = Math.max(this.seen, upto)
      for (const listener of this.listeners) listener(changes, upto)
      if (full) this.due = true
    }
  }

  /** Delivers this instance's commits that continue the log; drops those a read already passed. */
  private deliverOwn(): void {
    for (;;) {
      for (const [first, c] of this.own) if (c.head <= this.seen || first <= this.seen) this.own.delete(first)
      const c = this.own.get(this.seen + 1)
      if (!c) return
      this.own.delete(this.seen + 1)
      this.seen = c.head
      for (const listener of this.listeners) listener(c.changes, c.head)
    }
  }

  /** Where the next of this instance's commits starts, delivered or still under way. */
  private nextOwn(): number | undefined {
    let next: number | undefined
    for (const first of this.own.keys())
      if (first > this.seen && (next === undefined || first < next)) next = first
    for (const first of this.landing)
      if (first > this.seen && (next === undefined || first < next)) next = first
    return next
  }

  /** Folds what the log shows into this instance's engine (its own commits are already there). */
  private fold(rows: readonly Row[], events: readonly EventEnvelope[]): void {
    if (!this.host || (!rows.length && !events.length)) return
    const deleted: string[] = []
    const heads = new Map<string, SessionHead>()
    const entries = new Map<string, SessionEntry[]>()
    for (const r of rows) {
      const id = fromDb(r.session_id)
      if (r.kind === 'deleted') {
        deleted.push(id)
        continue
      }
      if (r.meta && r.v !== null)
        heads.set(
          id,
          headOf({ id: r.session_id, meta: r.meta, leaf: r.leaf, v: r.v, attachments: r.attachments }),
        )
      if (r.entry) {
        const list = entries.get(id)
        if (list) list.push(r.entry)
        else entries.set(id, [r.entry])
      }
    }
    // A session deleted and then created again within these rows is alive: it is in `heads`.
    this.host.applyExternal('remote', { deleted, heads: [...heads.values()], entries: [...entries] }, events)
  }

  /** A dedicated connection LISTENs; when it drops, it is opened again and the log read up. */
  private async listen(): Promise<void> {
    if (this.closed) return
    let client: pg.PoolClient | undefined
    let lost = false
    const again = (err?: unknown): void => {
      if (lost) return
      lost = true
      if (client) {
        client.removeAllListeners('notification')
        if (this.listener === client) this.listener = undefined
        try {
          client.release(err instanceof Error ? err : true)
        } catch {
          // Already released.
        }
      }
      if (this.closed) return
      const wait = this.retry
      this.retry = Math.min(this.retry * 2, 5000)
      setTimeout(() => void this.listen(), wait).unref()
    }
    try {
      client = await this.pool.connect()
      client.on('error', again)
      client.on('end', () => again())
      // The payload is the head after the commit: this instance's own, or one already read, needs nothing.
      client.on('notification', (n) => void (Number(n.payload) > this.seen && this.poke(true)))
      await client.query(`LISTEN ${CHANNEL}`)
      this.listener = client
      this.listens++
      this.retry = 100
    } catch (e) {
      this.options.warn(`listening for other instances failed (retrying): ${(e as Error).message}`)
      again(e)
      return
    }
    // Whatever was committed while nobody listened.
    await this.poke(true)
  }
}

function metadataOf(r: Row): JsonObject | undefined {
  return (r.kind === 'deleted' ? r.metadata : r.meta?.metadata) ?? undefined
}

/** A record as a replica change, with the current state of what it names (undefined if gone). */
function changeOf(r: Row): ReplicaChange | undefined {
  const session_id = fromDb(r.session_id)
  if (r.kind === 'deleted') return { type: 'delete', session_id }
  if (!r.live) return undefined
  if (r.kind === 'added' || r.kind === 'updated')
    return r.entry ? { type: 'entry', session_id, entry: r.entry } : undefined
  if (r.kind === 'detached') return { type: 'detach', session_id, attachment_id: fromDb(r.attachment_id!) }
  if (r.kind === 'attachment') {
    const attachment = r.attachments?.find((a) => a.attachment_id === fromDb(r.attachment_id!))
    return attachment && { type: 'attachment', session_id, attachment }
  }
  if (r.kind === 'leaf')
    return { type: 'leaf', session_id, entry_id: r.leaf === null ? null : fromDb(r.leaf) }
  return r.meta ? { type: 'meta', meta: r.meta } : undefined
}
