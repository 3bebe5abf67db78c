// `@colloquy/core/host`: what a process hosting a store reads of it beside the contract's
// calls. A sync server decides tenancy, quotas and what its change log lacks from it; the sync
// client seeds and resyncs from it. `has`, `head`, `heads` and `entries` read memory (no storage
// round trip). Over a storage that returns every head at open every session's head is held from
// open; over one with paged reads (IndexedDB, the server's PostgreSQL, `memoryStorage({ paged:
// true })`) only the working set is (`allHeld` false): a reader that must be right for any
// session asks `read` (or `load`), and walks sessions with `everyHead`. Entries are held once
// loaded. The store's engine stays its own.
import type { JsonObject, SessionEntry, SessionMeta } from './model/model.js'
import type { PagedReads, PageQuery, SessionHead } from './storage/seam.js'
import type { Keyring } from './crypto/keyring.js'
import { encryptedOf, engineOf, keyringOf, sealedBytesOf, type Store } from './store.js'
import { opened } from './engine/state.js'

// The types of commits and commit hooks (`store.commits$`, `store.addCommitHook`): what sync's
// outbox and a server's change log are written against.
export type { ChangePayload, ChangeSource, Commit, SessionChange } from './engine/changes.js'
export type { AppliedOp, CommitHook } from './engine/engine.js'
export type { Overlay } from './engine/overlay.js'
// How the store compares JSON values and matches a metadata filter (events, `session::list`):
// a host filtering or diffing records the same way uses the same rule.
export { jsonEqual, metadataMatches } from './model/json.js'
// A storage serving heads on demand (`Storage.paged`) pages in the contract's orders, ties
// broken as the store breaks them.
export { compareFor, positionOf } from './model/order.js'
export type { PageQuery, PagedReads } from './storage/seam.js'

export interface StoreHost {
  /** Whether the store holds the session (its head is in memory from open, or loaded: see `allHeld`). */
  has(session_id: string): boolean
  /** The session's head (meta, active leaf, version, attachments), or undefined when there is no such session. */
  head(session_id: string): SessionHead | undefined
  /**
   * Every session's head, in no set order (iterate at once: a commit may change the set); over
   * a storage with paged reads, those held (see `allHeld`).
   */
  heads(): IterableIterator<SessionHead>
  /**
   * False when the store holds only a working set of heads (a storage with paged reads): `has`,
   * `head` and `heads` then answer for loaded sessions only, and a session is loaded by `load`.
   */
  readonly allHeld: boolean
  /** The session's entries by id once they are in memory (see `load`); undefined before, or for no such session. */
  entries(session_id: string): ReadonlyMap<string, SessionEntry> | undefined
  /**
   * The session's head whether held or not: read from the storage into the working set when it
   * is not held (the working set may let go of it again; keep the value, not the lookup).
   * Undefined for no such session.
   */
  read(session_id: string): Promise<SessionHead | undefined>
  /**
   * Every session's head, whether held or not: the held ones when every head is, else read a
   * page at a time from the storage (oldest first), none of them kept. For walks over the whole
   * store (a sync resync, a server's scan of one principal's sessions) that must not depend on
   * what is loaded. `accept`, given, keeps the heads whose meta it takes; a storage applies it
   * as it reads (the pages then hold only those). `metadata`: the metadata filter `accept`
   * tests, if any (see `PageQuery.metadata`).
   */
  everyHead(accept?: (meta: SessionMeta) => boolean, metadata?: JsonObject): AsyncIterable<SessionHead>
  /**
   * One page of sessions read from the storage (`Storage.paged`), none of them kept: for a
   * host's own scoped listings when `allHeld` is false. Rejects over a storage without paged reads.
   */
  page(query: PageQuery): Promise<SessionHead[]>
  /** Loads the session's head and entries into memory once (what `entries` then returns); nothing for an unknown session. */
  load(session_id: string): Promise<void>
  /**
   * The session's head and entries without keeping them: those held when the store holds the
   * session (an encrypted store's entries held sealed opened for this copy only), else read from
   * the storage (opened, for an encrypted store) and left out of the working set. For a reader walking every session (a search index's first pass), which
   * would otherwise fill the working set with sessions nobody shows. The head is read before the
   * entries: the entries are at least as new as it, never older (a reader keeping the head as a
   * watermark of what it read finds the session changed since, never the other way). Undefined
   * for no such session.
   */
  snapshot(session_id: string): Promise<SessionSnapshot | undefined>
  /** `store.applyExternal`: folds changes committed elsewhere into memory and announces them. */
  applyExternal: Store['applyExternal']
  /**
   * The keyring of an encrypted store while it is unlocked (what sync seals its pushes with and
   * opens pulls with); null without encryption, and while locked.
   */
  readonly keyring: Keyring | null
  /** Whether the store is encrypted (`createStore({ encryption })`), locked or not. */
  readonly encrypted: boolean
  /**
   * An encrypted store's attachment bytes as kept at rest: sealed with `keyring` in the layout
   * sync uploads (`@colloquy/core/crypto`'s chunks, or the single envelope of before), never
   * opened, the storage's own Blob (IndexedDB's is backed by disk, not memory). Undefined
   * without encryption or without the bytes.
   */
  sealedAttachmentBytes(session_id: string, attachment_id: string): Promise<Blob | undefined>
}

/** A session's head and entries as `StoreHost.snapshot` read them. */
export interface SessionSnapshot {
  readonly head: SessionHead
  readonly entries: ReadonlyMap<string, SessionEntry>
}

/** How many heads `everyHead` reads at a time. */
const EVERY_HEAD_PAGE = 500

/**
 * Every head a storage with paged reads holds, oldest first, read a page at a time and none
 * kept (`accept`, given, keeps those whose meta it takes, applied by the storage as it reads).
 * What `StoreHost.everyHead` reads over a working set; also for a wrapper of the storage that
 * walks it before a store exists (a server's change log checking its records at open).
 */
export async function* pagedHeads(
  paged: PagedReads,
  accept?: (meta: SessionMeta) => boolean,
  metadata?: JsonObject,
): AsyncGenerator<SessionHead> {
  let after: { k: number; id: string } | undefined
  for (;;) {
    // Without `accept` a short page is the last; with it, a page is full of accepted heads or
    // the storage ran out of sessions.
    const page = await paged.page({
      order: 'created_asc',
      limit: EVERY_HEAD_PAGE,
      ...(after && { after }),
      ...(accept && { accept }),
      ...(metadata && { metadata }),
    })
    for (const head of page) yield head
    if (page.length < EVERY_HEAD_PAGE) return
    const last = page[page.length - 1].meta
    after = { k: last.created_at, id: last.session_id }
  }
}

const hosts = new WeakMap<Store, StoreHost>()

/** The host view of `store` (one per store; it reads the store live). */
export function hostOf(store: Store): StoreHost {
  let host = hosts.get(store)
  if (!host) hosts.set(store, (host = viewOf(store)))
  return host
}

function viewOf(store: Store): StoreHost {
  const engine = engineOf(store)
  const sessions = engine.state.sessions
  return {
    has: (id) => sessions.has(id),
    head: (id) => sessions.get(id)?.head,
    *heads() {
      // A copy: loading a session while iterating (a resync) moves it in the working set's order.
      for (const s of [...sessions.values()]) yield s.head
    },
    // Only a session held whole and opened: a reader finding none loads it (`load` opens all).
    entries: (id) => {
      const s = sessions.get(id)
      return opened(s) ? s!.entries : undefined
    },
    get allHeld() {
      return !engine.state.partial
    },
    load: (id) => engine.ensureLoaded(id),
    async snapshot(id) {
      const held = sessions.get(id)
      if (opened(held)) return { head: held!.head, entries: held!.entries! }
      const openEntries = engine.storage.openEntries
      if (held?.entries && openEntries) {
        // Held, some entries sealed (an encrypted store's reads open only what they return):
        // those are opened for this copy, not in memory, and nothing is read from disk again.
        const entries = new Map(held.entries)
        const sealed = [...held.sealed!].map((e) => entries.get(e)!)
        const plain = await openEntries.call(engine.storage, id, sealed)
        for (const e of plain) entries.set(e.id, e)
        return { head: held.head, entries }
      }
      const paged = engine.storage.paged
      const head = held ? held.head : engine.state.partial && paged ? await paged.head(id) : undefined
      if (!head) return undefined
      const list = await engine.storage.entries(id, head.meta.message_count)
      const entries = new Map<string, SessionEntry>()
      for (const e of list) entries.set(e.id, e)
      return { head, entries }
    },
    read: (id) => engine.ensureHead(id),
    async page(query) {
      const paged = engine.storage.paged
      if (!paged) throw new Error(`${engine.storage.name}: this storage has no paged reads`)
      return paged.page(query)
    },
    async *everyHead(accept, metadata) {
      const paged = engine.storage.paged
      if (!engine.state.partial || !paged) {
        for (const s of [...sessions.values()]) if (!accept || accept(s.head.meta)) yield s.head
        return
      }
      yield* pagedHeads(paged, accept, metadata)
    },
    applyExternal: (source, payload, events) => void engine.applyExternal(source, payload, events),
    get keyring() {
      return keyringOf(store)
    },
    get encrypted() {
      return encryptedOf(store)
    },
    sealedAttachmentBytes: (session_id, attachment_id) => sealedBytesOf(store, session_id, attachment_id),
  }
}
