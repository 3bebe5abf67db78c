// `@colloquy/core/host`: what a process hosting a store reads of it beside the contract's
// calls. A sync server decides tenancy, quotas and what its change log lacks from it; the sync
// client seeds and resyncs from it. Everything here reads memory (no storage round trip). Over a
// storage that returns every head at open (memory, the server's files and PostgreSQL) every
// session's head is held from open; over one with paged reads (IndexedDB) only the working set
// is (`allHeld` false), and `load` reads a session's head as well. Entries are held once loaded. The
// store's engine stays its own.
import type { SessionEntry } from './model/model.js'
import type { SessionHead } from './storage/seam.js'
import type { Keyring } from './crypto/keyring.js'
import { engineOf, keyringOf, type Store } from './store.js'

// The types of commits and commit hooks (`store.commits$`, `store.addCommitHook`): what sync's
// outbox and a server's change log are written against.
export type { ChangePayload, ChangeSource, Commit, SessionChange } from './engine/changes.js'
export type { AppliedOp, CommitHook } from './engine/engine.js'
export type { Overlay } from './engine/overlay.js'
// How the store compares JSON values and matches a metadata filter (events, `session::list`):
// a host filtering or diffing records the same way uses the same rule.
export { jsonEqual, metadataMatches } from './model/json.js'

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
   * Every session's head, whether held or not: the held ones when every head is, else read a
   * page at a time from the storage (oldest first), none of them kept. For walks over the whole
   * store (a sync resync) that must not depend on what is loaded.
   */
  everyHead(): AsyncIterable<SessionHead>
  /** Loads the session's head and entries into memory once (what `entries` then returns); nothing for an unknown session. */
  load(session_id: string): Promise<void>
  /** `store.applyExternal`: folds changes committed elsewhere into memory and announces them. */
  applyExternal: Store['applyExternal']
  /**
   * The keyring of an encrypted store while it is unlocked (what sync seals its pushes with and
   * opens pulls with); null without encryption, and while locked.
   */
  readonly keyring: Keyring | null
}

/** How many heads `everyHead` reads at a time. */
const EVERY_HEAD_PAGE = 500

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
    entries: (id) => sessions.get(id)?.entries,
    get allHeld() {
      return !engine.state.partial
    },
    load: (id) => engine.ensureLoaded(id),
    async *everyHead() {
      const paged = engine.storage.paged
      if (!engine.state.partial || !paged) {
        for (const s of [...sessions.values()]) yield s.head
        return
      }
      let after: { k: number; id: string } | undefined
      for (;;) {
        const page = await paged.page({
          order: 'created_asc',
          limit: EVERY_HEAD_PAGE,
          ...(after && { after }),
        })
        for (const head of page) yield head
        if (page.length < EVERY_HEAD_PAGE) return
        const last = page[page.length - 1].meta
        after = { k: last.created_at, id: last.session_id }
      }
    },
    applyExternal: (source, payload, events) => void engine.applyExternal(source, payload, events),
    get keyring() {
      return keyringOf(store)
    },
  }
}
