import type {
  JsonObject,
  ReplicaChange,
  SessionEntry,
  SessionHead,
  SideWrite,
  Storage,
  StorageReader,
  WriteSet,
} from '@colloquy/core'
import { metadataMatches, pagedHeads, type StoreHost } from '@colloquy/core/host'
import { WorkMeter } from '@colloquy/core/wire'
import { parentsFirst, type SequencedChange } from '@colloquy/core/protocol'
import { WORK_BUDGETS } from '../work.js'
import { PageBuilder, type EncodedPage } from './change-feed.js'
import {
  CHANGE_KINDS,
  ChangeIndex,
  recordKey,
  recordsOf,
  type ChangeRecord,
  type LiveRecord,
} from './change-index.js'

export type { SequencedChange }

export interface ChangePage {
  readonly changes: SequencedChange[]
  /** Where the next pull starts: the last record looked at, or the head once the log is read through. */
  readonly checkpoint: number
  /** The newest sequence number when the page was read. */
  readonly head: number
  readonly more: boolean
}

/** One commit as the live stream sees it: each change with the metadata that scopes it. */
export interface CommittedChange extends SequencedChange {
  readonly metadata: JsonObject | undefined
}

const CHANGES = 'changes'
const CHANGELOG = 'changelog'

interface Planned {
  rec: LiveRecord
  head?: SessionHead
  entry?: SessionEntry
}

interface Plan {
  adds: Planned[]
  kills: LiveRecord[]
  side: SideWrite[]
  heads: ReadonlyMap<string, SessionHead>
}

/**
 * The change log. It wraps the server's storage: every commit is given sequence numbers inside
 * its own transaction (the records travel as side writes, so they are durable exactly when the
 * commit is), and it keeps the index pull and the live stream read. Storage-agnostic: the file
 * storage persists the records in its journal, `memoryStorage()` in its side maps.
 */
export class ChangeLog {
  readonly index = new ChangeIndex()
  readonly storage: Storage
  private readonly listeners = new Set<(changes: readonly CommittedChange[], head: number) => void>()
  private host?: StoreHost
  private turn: Promise<unknown> = Promise.resolve()

  constructor(private readonly inner: Storage) {
    this.storage = {
      name: inner.name,
      ...(inner.paged && { paged: inner.paged }),
      open: () => this.open(),
      entries: (id) => inner.entries(id),
      transact: (work) => this.serial(() => this.transact(work)),
      sideRecords: inner.sideRecords && ((store) => inner.sideRecords!(store)),
      attachmentBytes:
        inner.attachmentBytes &&
        ((session_id, attachment_id) => inner.attachmentBytes!(session_id, attachment_id)),
      close: () => inner.close(),
    }
  }

  /** The store: entries not committed since start are read through its cache. */
  attach(host: StoreHost): void {
    this.host = host
  }

  get head(): number {
    return this.index.head
  }

  /** Called after every commit with its changes (in sequence order). Returns an unsubscriber. */
  subscribe(listener: (changes: readonly CommittedChange[], head: number) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Changes after `since` whose session metadata matches `filter` (tenancy), `limit` at most. */
  async page(since: number, limit: number, filter?: JsonObject): Promise<EncodedPage> {
    const idx = this.index
    const head = idx.head
    // A checkpoint ahead of this log comes from another incarnation of the server (a wiped or
    // restored data directory): the client must start over, and is told so.
    if (since > head) return { changes: [], checkpoint: 0, head, more: true, reset: true }
    const from = since
    const { records, checkpoint, more } = idx.scan(
      from,
      limit,
      (r) => metadataMatches(filter, this.metadataOf(r)),
      new WorkMeter(WORK_BUDGETS.pull),
    )
    const cold = new Set<string>()
    for (const r of records)
      if (r.entry_id !== undefined && !idx.sessions.get(r.session_id)?.entries.get(r.entry_id)?.snap)
        cold.add(r.session_id)
    if (cold.size) await Promise.all([...cold].map((id) => this.host?.load(id)))
    const page = new PageBuilder()
    for (const r of records) {
      // An entry the cache (or the working set of heads) let go of meanwhile is read again,
      // never left out of the page.
      await page.turn()
      if (
        r.entry_id !== undefined &&
        !idx.sessions.get(r.session_id)?.entries.get(r.entry_id)?.snap &&
        !this.host?.entries(r.session_id)
      )
        await this.host?.load(r.session_id)
      const change = this.changeOf(r)
      if (change && !page.add({ seq: r.seq, change }))
        return {
          changes: page.changes,
          encoded: page.encoded,
          checkpoint: page.changes[page.changes.length - 1]!.seq,
          head,
          more: true,
        }
    }
    return { changes: page.changes, encoded: page.encoded, checkpoint, head, more }
  }

  async positions(changes: readonly ReplicaChange[]): Promise<Array<number | undefined>> {
    return changes.map((c) => this.index.position(c))
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn)
    this.turn = run.catch(() => {})
    return run
  }

  private headOf(id: string): SessionHead | undefined {
    return this.index.sessions.get(id)?.head ?? this.host?.head(id)
  }

  private metadataOf(r: ChangeRecord): JsonObject | undefined {
    return r.kind === 'deleted' ? r.metadata : this.headOf(r.session_id)?.meta.metadata
  }

  /** A record as a replica change, with the current state of what it names (undefined if gone). */
  private changeOf(r: ChangeRecord): ReplicaChange | undefined {
    const s = this.index.sessions.get(r.session_id)
    if (r.kind === 'deleted') return { type: 'delete', session_id: r.session_id }
    if (!s) return undefined
    if (r.kind === 'added' || r.kind === 'updated') {
      const entry = s.entries.get(r.entry_id!)?.snap ?? this.host?.entries(r.session_id)?.get(r.entry_id!)
      return entry && { type: 'entry', session_id: r.session_id, entry }
    }
    const head = this.headOf(r.session_id)
    if (!head) return undefined
    if (r.kind === 'detached')
      return { type: 'detach', session_id: r.session_id, attachment_id: r.attachment_id! }
    if (r.kind === 'attachment') {
      const attachment = head.attachments?.find((a) => a.attachment_id === r.attachment_id)
      return attachment && { type: 'attachment', session_id: r.session_id, attachment }
    }
    return r.kind === 'leaf'
      ? { type: 'leaf', session_id: r.session_id, entry_id: head.leaf }
      : { type: 'meta', meta: head.meta }
  }

  private async open(): Promise<SessionHead[]> {
    const opened = await this.inner.open()
    // Over paged reads (`memoryStorage({ paged: true })`) the store opens with no head; the log
    // still checks every session against its records, reading them a page at a time. (Every
    // session it then serves was committed since this start, so the index holds its head: the
    // records of sessions the store's working set let go of are served from there.)
    const heads: SessionHead[] = []
    if (this.inner.paged) for await (const head of pagedHeads(this.inner.paged)) heads.push(head)
    else heads.push(...opened)
    const records = (await this.inner.sideRecords?.(CHANGES)) ?? []
    const saved = (await this.inner.sideRecords?.(CHANGELOG))?.find((r) => r.key === 'head')?.value
    const valid = records.map((r) => r.value).filter(isChangeRecord)
    // A damaged record is left out, never thrown on: the server must start on its data.
    if (valid.length < records.length)
      console.warn(`[colloquy changes] skipped ${records.length - valid.length} malformed change record(s)`)
    this.index.load(valid, Number.isSafeInteger(saved) ? (saved as number) : 0)
    // Over paged reads the store holds a working set: the heads read here are what a pull of a
    // session not committed since this start is served from (its metadata scopes it, its meta
    // and leaf records read it). The storage holds them already; this keeps a reference.
    if (this.inner.paged)
      for (const h of heads) {
        const s = this.index.sessions.get(h.meta.session_id)
        if (s && !s.head) s.head = h
      }
    // Sessions the log does not know (a directory written by the seed, or before this log
    // existed) are logged now; sessions the log knows that storage lost get a tombstone.
    const live = new Set(heads.map((h) => h.meta.session_id))
    const missing = heads.filter((h) => !this.index.sessions.has(h.meta.session_id))
    const lost = [...this.index.sessions.keys()].filter(
      (id) => !live.has(id) && !this.inner.unavailable?.(id),
    )
    if (missing.length || lost.length) {
      let plan = undefined as Plan | undefined
      await this.serial(() =>
        this.inner.transact(async (reader) => {
          const entries = new Map<string, Map<string, SessionEntry>>()
          for (const h of missing)
            entries.set(
              h.meta.session_id,
              new Map((await reader.entries(h.meta.session_id)).map((e) => [e.id, e])),
            )
          const ws: WriteSet = {
            deleted: new Set(lost),
            heads: new Map(missing.map((h) => [h.meta.session_id, h])),
            entries,
            side: [],
          }
          plan = await this.plan(ws, reader, true)
          return { deleted: new Set(), heads: new Map(), entries: new Map(), side: plan.side }
        }),
      )
      if (plan) this.apply(plan, false)
    }
    return opened
  }

  private async transact(work: (reader: StorageReader) => Promise<WriteSet>): Promise<void> {
    let plan = undefined as Plan | undefined
    await this.inner.transact(async (reader) => {
      const ws = await work(reader)
      plan = await this.plan(ws, reader, false)
      return plan.side.length ? { ...ws, side: [...ws.side, ...plan.side] } : ws
    })
    if (plan) this.apply(plan, true)
  }

  /** The records one commit adds and supersedes; nothing changes until `apply`. */
  private async plan(ws: WriteSet, reader: StorageReader, migrating: boolean): Promise<Plan> {
    const idx = this.index
    let seq = idx.head
    const adds: Planned[] = []
    const kills: LiveRecord[] = []
    // Object.assign rather than a spread: Node 20's V8 copies `{ ...r }` on a slow path (~0.4 µs,
    // against ~0.05), and every append adds three records. The keys and their order are the same.
    const next = (r: Omit<ChangeRecord, 'seq'>, snap: Omit<Planned, 'rec'> = {}): void => {
      const rec = Object.assign({}, r) as LiveRecord
      rec.seq = ++seq
      adds.push({ rec, ...snap })
    }

    for (const id of ws.deleted) {
      const s = idx.sessions.get(id)
      const prev = migrating ? undefined : await reader.head(id)
      if (!s && !prev) continue
      if (s) kills.push(...recordsOf(s))
      const tomb = idx.tombstones.get(id)
      if (tomb) kills.push(tomb)
      const metadata = prev?.meta.metadata ?? s?.head?.meta.metadata ?? this.host?.head(id)?.meta.metadata
      next({ kind: 'deleted', session_id: id, ...(metadata && { metadata }) })
    }
    const fresh = new Map<string, Set<string>>()
    const metas: Array<[string, SessionHead]> = []
    const leaves: Array<[string, SessionHead]> = []
    for (const [id, head] of ws.heads) {
      const s = ws.deleted.has(id) ? undefined : idx.sessions.get(id)
      if (!s) {
        const added = new Set<string>()
        fresh.set(id, added)
        next({ kind: 'created', session_id: id }, { head })
        // A fork's (or an import's) attachments come right after its creation, before its entries.
        for (const a of head.attachments ?? [])
          next({ kind: 'attachment', session_id: id, attachment_id: a.attachment_id }, { head })
        const inCommit = ws.entries.get(id)
        // A bulk import writes entries first and the head last: they appear with their session.
        if (head.leaf !== null && !inCommit?.has(head.leaf)) {
          for (const entry of parentsFirst(await reader.entries(id))) {
            if (inCommit?.has(entry.id)) continue
            next({ kind: 'added', session_id: id, entry_id: entry.id }, { entry })
            added.add(entry.id)
          }
        }
        if (head.leaf !== null) leaves.push([id, head])
        // Draft chips name attachments logged after the creation: a meta record follows them.
        if (head.meta.draft_attachments?.length) metas.push([id, head])
        continue
      }
      const prev = s.head ?? (await reader.head(id))
      if (head.meta !== prev?.meta) {
        if (s.meta) kills.push(s.meta)
        metas.push([id, head])
      }
      if (head.leaf !== (prev?.leaf ?? null)) {
        if (s.leaf) kills.push(s.leaf)
        leaves.push([id, head])
      }
      // Attachments before the entries of the same commit (a message may reference them). A
      // new one gets its record now and keeps it; a deleted one's record becomes `detached`.
      if ((head.attachments ?? []) !== (prev?.attachments ?? [])) {
        const now = new Set((head.attachments ?? []).map((a) => a.attachment_id))
        const was = new Map((prev?.attachments ?? []).map((a) => [a.attachment_id, a]))
        for (const a of head.attachments ?? []) {
          const held = was.get(a.attachment_id)
          if (held && held.sha256 === a.sha256 && s.attachments.get(a.attachment_id)?.kind === 'attachment')
            continue
          const old = s.attachments.get(a.attachment_id)
          if (old) kills.push(old)
          next({ kind: 'attachment', session_id: id, attachment_id: a.attachment_id }, { head })
        }
        for (const a_id of was.keys()) {
          if (now.has(a_id)) continue
          const old = s.attachments.get(a_id)
          if (old) kills.push(old)
          next({ kind: 'detached', session_id: id, attachment_id: a_id }, { head })
        }
      }
    }
    for (const [id, entries] of migrating
      ? [...ws.entries].map(
          ([id, m]) => [id, new Map(parentsFirst([...m.values()]).map((e) => [e.id, e]))] as const,
        )
      : ws.entries) {
      const added = fresh.get(id)
      const s = added ? undefined : idx.sessions.get(id)
      // Entries of a session that has no head yet (bulk import chunks) are logged with it.
      if (!added && !s) continue
      for (const entry of entries.values()) {
        const known = s?.entries.get(entry.id)
        if (known) {
          if (known.updated) kills.push(known.updated)
          next({ kind: 'updated', session_id: id, entry_id: entry.id }, { entry })
        } else if (!added?.has(entry.id)) {
          next({ kind: 'added', session_id: id, entry_id: entry.id }, { entry })
          added?.add(entry.id)
        }
      }
    }
    for (const [id, head] of metas) next({ kind: 'meta', session_id: id }, { head })
    for (const [id, head] of leaves) next({ kind: 'leaf', session_id: id }, { head })

    const side: SideWrite[] = []
    if (adds.length) {
      const keys = adds.map(({ rec }) => recordKey(rec))
      const replaced = new Set(keys)
      // A record replaced under its own key (a session's meta and leaf on every append) needs no
      // delete before its new value: the journal line and the side maps end up the same.
      for (const k of kills) {
        const key = recordKey(k)
        if (!replaced.has(key)) side.push({ store: CHANGES, key, value: undefined })
      }
      adds.forEach(({ rec }, i) => side.push({ store: CHANGES, key: keys[i], value: rec }))
      side.push({ store: CHANGELOG, key: 'head', value: seq })
    }
    return { adds, kills, side, heads: ws.heads }
  }

  private apply(plan: Plan, announce: boolean): void {
    const idx = this.index
    for (const k of plan.kills) idx.kill(k)
    for (const { rec, head, entry } of plan.adds) idx.add(rec, { head, entry })
    for (const [id, head] of plan.heads) {
      const s = idx.sessions.get(id)
      if (s) s.head = head
    }
    if (!announce || !plan.adds.length || !this.listeners.size) return
    const changes: CommittedChange[] = []
    for (const { rec } of plan.adds) {
      const change = this.changeOf(rec)
      if (change) changes.push({ seq: rec.seq, change, metadata: this.metadataOf(rec) })
    }
    for (const listener of this.listeners) listener(changes, idx.head)
  }
}

const KINDS: readonly unknown[] = CHANGE_KINDS
function isChangeRecord(v: unknown): v is ChangeRecord {
  const r = v as Partial<ChangeRecord> | null
  return (
    typeof r === 'object' &&
    r !== null &&
    Number.isSafeInteger(r.seq) &&
    KINDS.includes(r.kind) &&
    typeof r.session_id === 'string' &&
    (r.entry_id === undefined || typeof r.entry_id === 'string') &&
    ((r.kind !== 'added' && r.kind !== 'updated') || typeof r.entry_id === 'string') &&
    ((r.kind !== 'attachment' && r.kind !== 'detached') || typeof r.attachment_id === 'string')
  )
}
