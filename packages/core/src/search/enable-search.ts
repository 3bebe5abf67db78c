import { type Observable, Subject, defer, distinctUntilChanged, from, merge, of, switchMap } from 'rxjs'
import { hostOf } from '../host.js'
import { SessionError } from '../model/errors.js'
import type { SessionEntry } from '../model/model.js'
import type { SessionHead } from '../storage/seam.js'
import type { Store } from '../store.js'
import { parseSearchRequest, type SearchRole } from '../validation/search-request.js'
import { checkSearchRequest } from './check-request.js'
import { entryText, type TextOptions } from './doc-text.js'
import { searchDatabaseOf } from '../storage/idb/search-databases.js'
import { openIndexStore, type IndexStore, type SessionRecord } from './index-store.js'
import { BLOCK_DOCS, packBlock, placeDoc, unpackBlock, type DocBlock } from './doc-block.js'
import { InvertedIndex, docOf, type Doc, type DocTerms, type SessionDocs } from './inverted-index.js'
import { parseQuery } from './parse-query.js'
import { runQuery, SEARCH_WORK_BUDGET, type TextSource } from './run-query.js'
import type { SearchResult } from './hit.js'
import type { ParsedQuery } from './parse-query.js'
import type { SearchRequest } from '../validation/search-request.js'

export interface SearchOptions {
  /** Index thinking blocks too; default false. */
  readonly thinking?: boolean
  /**
   * Keep the index in IndexedDB (a database named after the store's, `<name>:search`), so a reload
   * catches up instead of reading everything again. Default: when the store's storage is IndexedDB
   * and the store is not encrypted. An encrypted store's index is kept in memory only (see
   * `memoryOnly` below): `true` there is `session/invalid_request`.
   */
  readonly persist?: boolean
  /**
   * How long a session must be quiet before its changes are indexed (ms, default 300; at most
   * ten times that while it keeps changing): a streamed reply is indexed when it settles, not per
   * token. A query indexes whatever is pending first, so it never misses a committed message.
   */
  readonly settleMs?: number
  /** Work one query may spend (see `SEARCH_WORK_BUDGET`, the default). */
  readonly workBudget?: number
  /**
   * Only the sessions whose head this accepts are indexed (default: all). A server keeps one
   * index per principal with it: no hit, and no term statistic, crosses to another's sessions.
   */
  readonly include?: (head: SessionHead) => boolean
  /**
   * Awaited between sessions once a pass has indexed this many documents since the last wait
   * (with `yieldEvery`), so a long first pass leaves the event loop to others (a server's other
   * requests); default: never.
   */
  readonly pause?: () => Promise<void>
  readonly yieldEvery?: number
  /**
   * Answers a query over the index instead of `runQuery` (a server's top-k, which may wait
   * between slices of its work): run in turn with the index's passes, so no pass changes the
   * index while it waits.
   */
  readonly run?: QueryRun
}

/** A query's answer over the index (`runQuery` is one), with `budget` the work it may spend at a time. */
export type QueryRun = (
  index: InvertedIndex,
  request: SearchRequest,
  query: ParsedQuery,
  source: TextSource,
  budget: number,
) => Promise<SearchResult>

export interface Search {
  /** The best hits for a query, once everything committed before the call is indexed. */
  query(request: unknown): Promise<SearchResult>
  /** The query's answer now and again whenever the index changed it. */
  query$(request: unknown): Observable<SearchResult>
  /** Resolves when every commit seen so far is indexed (and written, when persisted). */
  flush(): Promise<void>
  /** Stops following the store and closes the index's database. */
  close(): void
}

/** Blocks read from disk at a time on open (up to `BLOCK_DOCS` documents each, a few milliseconds of work). */
const LOAD_BATCH = 4

/**
 * Lets the page's other tasks run: a message to itself, a task of ordinary priority (not
 * `scheduler.yield`, whose continuation goes before the app's own waiting tasks, nor a timer,
 * which nested ones hold back 4 ms each).
 */
const yieldToPage = (): Promise<void> =>
  new Promise((resolve) => {
    if (typeof MessageChannel === 'undefined') return void setTimeout(resolve, 0)
    const channel = new MessageChannel()
    channel.port1.onmessage = () => {
      channel.port1.close()
      resolve()
    }
    channel.port2.postMessage(null)
  })

/**
 * Documents built before they are written (then the session being indexed finishes, and the
 * batch goes in one transaction while the next is built): what bounds a first pass's memory.
 */
export const WRITE_BATCH = 2_000

/** Sessions a pass reads ahead of the one it indexes. */
const READ_AHEAD = 8

interface SessionRead {
  /** Changes seen of the session when its read began (`changes`): a later one makes it stale. */
  readonly at: number
  readonly head: SessionHead | undefined
  readonly entries: ReadonlyMap<string, SessionEntry> | undefined
}

/** Documents one pass indexes past which the index gives back its arrays' spare room. */
const TRIM_AFTER = 1024

/** The store's head as the index last read it: when it differs, the session is read again. */
export const markOf = (head: SessionHead): string =>
  JSON.stringify([head.v, head.meta.created_at, head.meta.updated_at, head.meta.message_count, head.leaf])

const roleOf = (entry: SessionEntry): SearchRole | null =>
  entry.kind === 'message' ? entry.message.role : null

/**
 * The id `id` as the index holds it already (its document's `eid`), else `id`: a document's
 * parent is the id of another of its session's documents, and one string held for both, not a
 * copy each (every entry read from the storage brings its own copies), is a string less per
 * document.
 */
const sameId = (s: SessionDocs, id: string | null): string | null =>
  id === null ? null : (s.docs.get(id)?.eid ?? id)

/** A name for the index's database derived from the store's storage (`indexeddb:colloquy` → `colloquy:search`). */
const databaseOf = (storage: string, options: TextOptions): string =>
  searchDatabaseOf(storage.replace(/^indexeddb:/, ''), options.thinking)

/**
 * Full-text search over every message of every session in `store`: indexes what is there (from
 * the persisted index, reading again only sessions changed since), then follows every commit,
 * whatever made it (this tab, another tab through the relay, sync).
 */
export function enableSearch(store: Store, options: SearchOptions = {}): Promise<Search> {
  return searchWith(store, options, BLOCK_DOCS)
}

/**
 * `enableSearch` with blocks of at most `blockDocs` documents: tests make them small, so the
 * short sessions of a random run span several blocks.
 */
export async function searchWith(store: Store, options: SearchOptions, blockDocs: number): Promise<Search> {
  const text: TextOptions = { thinking: options.thinking ?? false }
  const settleMs = options.settleMs ?? 300
  const host = hostOf(store)
  let index = new InvertedIndex()
  // memoryOnly: over an encrypted store the index holds the words of every message, so it never
  // touches the disk (no plaintext at rest); it is built on open and on unlock, and a lock drops
  // it (docs/encryption.md: search, for the measured choice and what each option leaks).
  let lockedNow = false
  store.locked$.subscribe((l) => (lockedNow = l)).unsubscribe()
  if (lockedNow) throw new SessionError('session/locked', 'the store is locked: search needs it unlocked')
  const memoryOnly = host.keyring !== null
  if (memoryOnly && options.persist)
    throw new SessionError(
      'session/invalid_request',
      'persist: an encrypted store keeps its search index in memory only (a persisted index would hold its words in clear)',
    )
  const persist =
    !memoryOnly &&
    (options.persist ?? store.storage.name.startsWith('indexeddb:')) &&
    typeof indexedDB !== 'undefined'
  const changed = new Subject<void>()
  /** Changes seen per session (reads into memory not counted). */
  const changes = new Map<string, number>()
  const dirty = new Set<string>()
  /**
   * Per session indexed from its entries in memory: the entries commits added or updated since
   * (null once a commit said anything else: reloaded, deleted). Started by the pass that indexed
   * it, so the next pass looks at these entries only, not the whole session (an append to a long
   * session read every entry of it to find the new one). No record: the whole session is read.
   */
  const since = new Map<string, string[] | null>()
  let closed = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let firstDirtyAt = 0
  let running: Promise<void> = Promise.resolve()
  let loaded = false

  let disk: IndexStore | undefined
  // One tab writes the index's database at a time (a Web Lock named after it): two tabs writing
  // each their own changes could leave a mark beside documents another tab wrote. A tab that
  // becomes the writer later (the writer closed) first writes everything it holds, whole.
  let writer = false
  let rewrite = false
  const stop = new AbortController()
  let release = (): void => {}
  const holding = new Promise<void>((resolve) => (release = resolve))
  if (persist) {
    const name = databaseOf(store.storage.name, text)
    // Deleted under it (the store's data deleted, `deleteIndexedDbStore`): it lets go at once, so
    // the deletion is not blocked by this tab, and the index goes on in memory, writing nothing.
    disk = await openIndexStore(name, () => void (disk = undefined))
    const locks = typeof navigator === 'undefined' ? undefined : navigator.locks
    if (!locks) writer = true
    else {
      writer = await new Promise<boolean>((resolve) => {
        void locks.request(name, { ifAvailable: true }, (lock) => {
          resolve(lock !== null)
          return lock && holding
        })
      })
      if (!writer)
        locks
          .request(name, { signal: stop.signal }, () => {
            writer = rewrite = true
            // Written by the next pass (once the index is loaded: the pass waits for that).
            if (loaded) void flush().catch(() => {})
            return holding
          })
          .catch(() => {})
    }
  }

  // A session outside the index's scope is as good as absent (one that changed hands leaves it).
  const within = (head: SessionHead | undefined): SessionHead | undefined =>
    head && (!options.include || options.include(head)) ? head : undefined
  // Subscribed at once: a change made before the index is loaded is not missed.
  const sub = store.commits$.subscribe((commit) => {
    for (const [sid, change] of commit.changes) {
      // A session read into memory (by this index's own catch-up, too) is no change when its head
      // is the one indexed; marking it would read it again once the working set let it go, and
      // that read announces it again: a loop.
      const read = change.reloaded && change.head === undefined
      // Before the index is loaded, the catch-up that loading ends with compares every head: a
      // read (the app's first screen) is no reason to load it.
      if (read && !loaded) continue
      // A change (not a read): a snapshot of the session read ahead before it is stale.
      if (!read) changes.set(sid, (changes.get(sid) ?? 0) + 1)
      const ids = since.get(sid)
      if (ids) {
        if (change.reloaded || change.head === null) since.set(sid, null)
        else {
          for (const e of change.added) ids.push(e.id)
          for (const e of change.updated) ids.push(e.id)
        }
      }
      const head = read ? host.head(sid) : undefined
      if (head && index.sessions.get(sid)?.mark === markOf(head)) continue
      dirty.add(sid)
    }
    schedule()
  })

  /**
   * The index read from disk, then caught up with the store: done by the first pass (a query, a
   * flush, or a change settling), not at open, so an app's first screen does not wait on reading
   * an index it may never query.
   */
  async function load(): Promise<void> {
    if (disk) {
      const from = disk
      // The sessions' records before their documents: a document another tab's writer wrote
      // meanwhile comes with a newer mark than the one read, so its session is read again anyway.
      for (const s of await from.sessions())
        index.sessions.set(s.sid, {
          mark: s.mark,
          title: s.title && index.add(s.title),
          docs: new Map(),
          blocks: [],
        })
      // A page at a time, the page's own work running in between.
      for await (const blocks of from.blocks(LOAD_BATCH)) {
        for (const b of blocks) {
          const s = index.sessions.get(b.sid)
          // A block without its session record cannot be: written together, deleted together.
          if (!s) continue
          for (const d of unpackBlock(b)) {
            const parent = sameId(s, d.parent)
            const doc = index.add(parent === d.parent ? d : { ...d, parent })
            doc.block = b.n
            s.docs.set(d.eid!, doc)
          }
          s.blocks[b.n] = b.eids.length
        }
        await yieldToPage()
      }
    }
    // Every session the store holds, a page at a time (a store with a working set of heads holds
    // most of them on disk only): those whose head moved since they were indexed are read again,
    // and indexed sessions the store no longer holds are dropped.
    const present = new Set<string>()
    for await (const head of host.everyHead()) {
      if (!within(head)) continue
      const sid = head.meta.session_id
      present.add(sid)
      if (index.sessions.get(sid)?.mark !== markOf(head)) dirty.add(sid)
    }
    for (const sid of index.sessions.keys()) if (!present.has(sid)) dirty.add(sid)
    loaded = true
  }

  // One timer per settling, not one per commit (re-armed from its own end while changes keep
  // coming): clearing and setting a timer on every commit was a cost of every write.
  let lastDirtyAt = 0
  function schedule(): void {
    if (closed || !dirty.size) return
    lastDirtyAt = Date.now()
    if (timer !== undefined) return
    firstDirtyAt = lastDirtyAt
    const settled = (): void => {
      const wait = Math.min(lastDirtyAt + settleMs, firstDirtyAt + settleMs * 10) - Date.now()
      if (wait > 0) timer = setTimeout(settled, wait)
      else {
        timer = undefined
        void flush().catch(() => {})
      }
    }
    timer = setTimeout(settled, settleMs)
  }

  function flush(): Promise<void> {
    if (timer !== undefined) {
      clearTimeout(timer)
      timer = undefined
    }
    const pass = running.then(loadOnce).then(drain)
    running = pass.catch(() => {})
    return pass
  }

  async function loadOnce(): Promise<void> {
    if (loaded || closed) return
    try {
      await load()
    } catch (err) {
      // Half read: start again from nothing on the next pass, never on top of it.
      index = new InvertedIndex()
      throw err
    }
  }

  /** The document of one entry of session `s` as it is now. */
  function entryDoc(sid: string, s: SessionDocs, e: SessionEntry): DocTerms {
    const body = entryText(e, text)
    const ts = e.kind === 'message' ? e.message.timestamp : e.timestamp
    const eid = s.docs.get(e.id)?.eid ?? e.id
    return docOf({ sid, eid, role: roleOf(e), ts, parent: sameId(s, e.parent_id), rev: e.revision }, body)
  }

  /**
   * The session as the storage holds it, read without keeping it in the store's working set: a
   * first pass over a large store would otherwise fill that set with every session in turn (the
   * set's own bound, hundreds of sessions with their entries, was most of the pass's live heap).
   */
  const readSession = (sid: string): Promise<SessionRead> => {
    const at = changes.get(sid) ?? 0
    return host.snapshot(sid).then((got) => ({ head: got?.head, entries: got?.entries, at }))
  }
  const headMark = (sid: string): string | undefined => {
    const h = host.head(sid)
    return h && markOf(h)
  }

  async function drain(): Promise<void> {
    let deleted: string[] = []
    let sessions: SessionRecord[] = []
    // Blocks are built for the write only when there is one to make, and kept only until the next
    // batch is written: a first pass over a large store never holds them all.
    let blocks: DocBlock[] = []
    let dropped: [string, number][] = []
    /** Documents in `blocks` (what bounds a batch). */
    let pending = 0
    let added = 0
    let sincePause = 0
    let announced = false
    // Sessions read ahead of their turn, each with the snapshot its read gave (not a lookup in
    // the store's working set, which may let them go before their turn).
    const ahead = new Map<string, Promise<SessionRead>>()
    // The batch last written, committing while the next is built (see `writeOut`).
    let writing: Promise<void> | undefined
    // Writes what this pass holds so far: whole sessions only (a session's documents and its mark
    // in one transaction), so a crash between batches leaves every mark true to its documents.
    const writeOut = async (): Promise<void> => {
      if (!deleted.length && !sessions.length) return
      if (!announced) {
        announced = true
        changed.next()
      }
      const batch = { deleted, sessions, blocks, dropped }
      deleted = []
      sessions = []
      blocks = []
      dropped = []
      pending = 0
      // Made now, before the previous batch commits (transactions over the same stores commit in
      // the order they were made): the requests take their copies as they are made, so a batch's
      // blocks are garbage before they can be kept into the old generation waiting their turn.
      const before = writing
      writing = undefined
      if (writer && disk) {
        const w = disk.write(batch)
        batch.blocks.length = 0
        writing = w
        // Its failure is the pass's, met where it is awaited (the next batch, the pass's end).
        w.catch(() => {})
      }
      // At most two batches in flight: what waits stays bounded.
      await before
    }
    while (dirty.size && !closed) {
      if (options.pause && sincePause >= (options.yieldEvery ?? Infinity)) {
        sincePause = 0
        await options.pause()
        continue
      }
      const [sid] = dirty
      dirty.delete(sid)
      const recorded = since.get(sid)
      since.delete(sid)
      const seen = host.head(sid)
      let head = within(seen)
      const held = index.sessions.get(sid)
      if (head && held && held.mark === markOf(head)) {
        if (recorded) since.set(sid, recorded)
        continue
      }
      // Not in memory (a head let go from the working set, or never loaded): read it, then decide.
      // (A head held and out of scope is not read: it is absent here.)
      let entries = head && host.entries(sid)
      // A session read below is new entries objects: what was recorded of the old ones is no guide.
      const inMemory = entries !== undefined
      if (head ? !entries : !seen && !host.allHeld) {
        const mine = ahead.get(sid) ?? readSession(sid)
        ahead.delete(sid)
        // The next sessions are read meanwhile (each read a round trip to the storage).
        for (const next of dirty) {
          if (ahead.size >= READ_AHEAD) break
          // (Not one indexed whose head, held, is the one indexed: it is skipped at its turn.)
          const mark = index.sessions.get(next)?.mark
          if (ahead.has(next) || host.entries(next) || (mark !== undefined && mark === headMark(next)))
            continue
          const p = readSession(next)
          p.catch(() => {})
          ahead.set(next, p)
        }
        let got: SessionRead
        try {
          got = await mine
          // Changed since it was read ahead: read again (this time, its turn).
          if ((changes.get(sid) ?? 0) !== got.at) got = await readSession(sid)
        } catch (err) {
          // (Its record, if any, is gone: read whole next time.)
          dirty.add(sid)
          throw err
        }
        // No head: the storage holds no such session (a snapshot is the pass's own, which no
        // working set can let go of before its turn).
        head = within(got.head)
        entries = head && got.entries
      }
      if (!head || !entries) {
        if (held) {
          index.removeSession(sid)
          deleted.push(sid)
        }
        continue
      }
      // Read synchronously from here on: the head and the entries are one state of the store.
      const s: SessionDocs = held ?? { mark: '', title: null, docs: new Map(), blocks: [] }
      if (!held) index.sessions.set(sid, s)
      const keep = disk && writer
      // The blocks this changes, and the documents built here (the rest of a block is read back
      // from the index's postings).
      const touched = new Set<number>()
      const made = new Map<Doc, DocTerms>()
      const index1 = (e: SessionEntry): void => {
        const old = s.docs.get(e.id)
        if (old && old.rev === e.revision) return
        const doc = entryDoc(sid, s, e)
        if (old) index.remove(old)
        const kept = index.add(doc)
        kept.block = old ? old.block : placeDoc(s, blockDocs)
        s.docs.set(e.id, kept)
        added++
        sincePause++
        touched.add(kept.block)
        if (keep) made.set(kept, doc)
      }
      // Only the entries commits named since the last pass when they account for every entry:
      // the session's entries then are those indexed and those named. Any doubt (a count that
      // differs), and every entry is looked at, and every document checked against them.
      const named = held && inMemory ? recorded : undefined
      if (named) {
        for (const id of named) {
          const e = entries.get(id)
          if (e) index1(e)
        }
      }
      if (!named || s.docs.size !== entries.size) {
        for (const e of entries.values()) index1(e)
        for (const [eid, old] of s.docs) {
          if (entries.has(eid)) continue
          index.remove(old)
          s.docs.delete(eid)
          s.blocks[old.block]--
          touched.add(old.block)
        }
      }
      if (keep && touched.size) {
        const members = new Map<number, DocTerms[]>()
        for (const n of touched) members.set(n, [])
        for (const d of s.docs.values()) members.get(d.block)?.push(made.get(d) ?? index.built(d))
        for (const [n, docs] of members) {
          if (docs.length) blocks.push(packBlock(sid, n, docs))
          else dropped.push([sid, n])
          pending += docs.length
        }
      }
      if (s.title) index.remove(s.title)
      const title = head.meta.title
        ? docOf(
            { sid, eid: null, role: 'title', ts: head.meta.updated_at, parent: null, rev: -1 },
            head.meta.title,
          )
        : null
      s.title = title && index.add(title)
      s.mark = markOf(head)
      // Indexed from entries the store holds now: its commits from here on are recorded.
      if (host.entries(sid) === entries) since.set(sid, [])
      sessions.push({ sid, mark: s.mark, title })
      if (pending >= WRITE_BATCH) await writeOut()
    }
    // A pass that indexed many (the first, a sync) leaves lists with room they will not use soon.
    if (added >= TRIM_AFTER) index.trim()
    if (rewrite && disk) {
      await writing
      rewrite = false
      const all = [...index.sessions.entries()]
      await disk.replace({
        sessions: all.map(([sid, s]) => ({ sid, mark: s.mark, title: s.title && index.built(s.title) })),
        blocks: all.flatMap(([sid, s]) => {
          const members = new Map<number, DocTerms[]>()
          for (const d of s.docs.values()) {
            const docs = members.get(d.block)
            if (docs) docs.push(index.built(d))
            else members.set(d.block, [index.built(d)])
          }
          return [...members].map(([n, docs]) => packBlock(sid, n, docs))
        }),
      })
    }
    // (Done above when this pass rewrote everything: the last batch is then a repeat, harmless.)
    await writeOut()
    await writing
  }

  const source = {
    async text(sid: string, eid: string | null): Promise<string | undefined> {
      if (!host.entries(sid)) await host.load(sid)
      if (eid === null) return host.head(sid)?.meta.title
      const e = host.entries(sid)?.get(eid)
      return e ? (entryText(e, text) ?? undefined) : undefined
    },
    // The index's own copy when the store let the head go: the index is current (a query drains
    // what is pending first), and its mark holds the leaf it was built on.
    leaf: (sid: string) => {
      const head = host.head(sid)
      if (head) return head.leaf
      const mark = index.sessions.get(sid)?.mark
      return mark ? ((JSON.parse(mark) as unknown[])[4] as string | null) : undefined
    },
  }

  async function query(request: unknown): Promise<SearchResult> {
    if (lockedOut)
      throw new SessionError(
        'session/locked',
        'the store was locked: enable search again once it is unlocked',
      )
    const req = parseSearchRequest(request)
    const parsed = parseQuery(req.query, req.prefix)
    await flush()
    const run = options.run
    if (!run) return runQuery(index, req, parsed, source, options.workBudget)
    const answer = running.then(() =>
      run(index, req, parsed, source, options.workBudget ?? SEARCH_WORK_BUDGET),
    )
    running = answer.then(
      () => {},
      () => {},
    )
    return answer
  }

  const same = (a: SearchResult, b: SearchResult): boolean => JSON.stringify(a) === JSON.stringify(b)

  const search: Search = {
    query,
    query$: (request) =>
      defer(() => {
        // Checked at subscribe: a bad request errors the observable with its SessionError.
        const req = checkSearchRequest(request)
        return merge(of(undefined), changed).pipe(
          switchMap(() => from(query(req))),
          distinctUntilChanged(same),
        )
      }),
    flush,
    close() {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      sub.unsubscribe()
      changed.complete()
      stop.abort()
      void running.then(() => {
        disk?.close()
        release()
      })
      lockSub?.unsubscribe()
    },
  }
  // A lock (here or in another tab) drops the words this index holds: it ends the search.
  let lockedOut = false
  const lockSub = memoryOnly
    ? store.locked$.subscribe((locked) => {
        if (!locked || lockedOut) return
        lockedOut = true
        index = new InvertedIndex()
        search.close()
      })
    : undefined
  return search
}
