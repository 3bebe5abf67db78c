// The database's layout: its object stores, keys and stamps, and how a session's entries are
// read (shared by the storage, its write half and its upgrades).
import type { SessionEntry } from '../../model/model.js'
import type { SessionHead } from '../seam.js'

export const SESSIONS = 'sessions'
export const ENTRIES = 'entries'
/** Attachment bytes as Blobs keyed [session_id, attachment_id]: never read with a session. */
export const BLOBS = 'attachments'
/** Stores beside the session data, written in the same transactions (sync outbox, checkpoints). */
export const SIDE_STORES = ['outbox', 'kv'] as const
/** Each session's sort keys and filter fields, keyed by session id (see `Order`). */
export const ORDER = 'order'
export const ALL = [SESSIONS, ENTRIES, ORDER, BLOBS, ...SIDE_STORES]
/** The index of stamps in `entries`, keyed [session_id, -v]: a session's first is its newest (one `get`, no cursor). */
export const STAMPS = 'stamps'
/**
 * The key of a session's marker in `entries`: [session_id, 0]. A number sorts before every
 * string, so the marker is inside the session's key range (a delete takes it) and outside the
 * range its entries are read from.
 */
export const MARK = 0

/**
 * The layout (version 3). Before it, every append rewrote the session's head record (leaf,
 * message_count, updated_at, v) beside its entry: two puts in two stores, 30-45% over one put.
 * Now the head record in `sessions` holds what changes rarely (meta, attachments) and the
 * volatile part is stamped on the one record each commit writes last for the session:
 * - an append (or any commit that changes only leaf, count, updated_at and v, and writes an entry
 *   of the session) stamps `h` on one of its entries: one put in one store;
 * - any other commit rewrites the head record and stamps the session's marker ([session_id, 0]).
 * Every commit thus writes exactly one stamp with the session's new `v`, and the stamp index
 * ([session_id, -v]) answers "what is on disk now" with one `get`: the newest stamp (a `get`
 * costs less than a cursor, hence -v). A commit built from memory checks that stamp against the
 * head it was built on (the same `v` and incarnation) without waiting for it, and aborts on a
 * mismatch; IndexedDB runs
 * read-write transactions over one store one after the other, so two tabs appending at once
 * see each other and the second runs again on the first's head: one chain.
 * The incarnation is drawn when a session is written for the first time (created, imported,
 * re-created after a delete), so a session deleted and created again under the same id elsewhere
 * never matches a stale copy whose `v` happens to be the same. Reading a session's head takes
 * the head record and the newest stamp (`derive`).
 * A stamp is a read check, not a unique claim: a uniqueness constraint would miss a commit that
 * overwrites the very record holding the stamp (an update of the last entry, a marker rewrite)
 * and a session deleted in between (nothing left to collide with).
 */
export interface Stamp {
  readonly s: string
  readonly v: number
  /** -v: what the index orders by, so the newest stamp comes first. */
  readonly o: number
  /** The incarnation. */
  readonly i: string
  /** On an entry: the leaf, message_count and updated_at at this commit. Absent on a marker. */
  readonly l?: string | null
  readonly n?: number
  readonly u?: number
}
export type Stamped = { h?: Stamp }

/**
 * The order record (version 5, grown in version 6): what `session::list` sorts and filters by,
 * and since version 6 the volatile part of the head (leaf, message_count, v, incarnation), one
 * per session in `ORDER`, keyed by session id. Every commit that writes a session's head writes
 * it in the same transaction (and it is deleted with the session), so it always says what the
 * session's newest stamp says: a head is its record in `SESSIONS` plus its order record, two
 * `get`s by key (`headOf`). Its two indexes, `updated` ([u, s]) and `created` ([c, s]), are the
 * contract's orders: walked forwards for `created_asc`, backwards for the two `desc` orders
 * (which reverse the whole tuple, session id included), from a keyset cursor's position. A page
 * of 50 reads the order records in one `getAll` and the 50 head records they name, the requests
 * an app reading its own index makes, whatever the session count, so a store opens without
 * reading any head (issue 28).
 *
 * Why a record of its own. Version 3 made an append write one record (its entry, stamped with
 * the new updated_at; see `Stamp`): an index on the head record's `updated_at` would be stale,
 * and an index over the stamps' `u` holds one record per commit (older stamps stay), so walking
 * it is not bounded by the page size. The order record is tiny (no metadata, no title, no
 * draft), so an append's second put costs a fraction of the head record version 3 took out of
 * it. Version 5 held only the sort keys and filters, so a listed head was its record plus its
 * newest stamp, an index `get` that answers with the whole entry holding it (the message, its
 * text): at 100,000 sessions the list took 2.5x what the same page read through the index takes
 * (W9). Version 6 carries what the stamp would have told (`l`, `n`, `v`, `i`) and the stamp
 * stays the check of a commit built from memory (`Stamp`). The record is now written with
 * every head, not only when a sort key or filter moved; an append moved updated_at nearly
 * every time already, so its cost stays: `node test/bench/run.mjs W1` on the shared 2-core
 * machine (load 12-15), 10k awaited appends, 28,259 ms before (1.54x the stamped raw layout in
 * the same run), 27,327 and 28,108 ms after (1.52x and 1.63x).
 * Status and kind ride along so those filters skip sessions without reading
 * their heads; the metadata filter reads the head (under the list's work budget).
 */
export interface Order {
  readonly s: string
  /** updated_at, created_at. */
  readonly u: number
  readonly c: number
  /** status, kind. */
  readonly t: string
  readonly k: string
  /** The leaf, message_count and `v` of the head as last written, and its incarnation (version 6). */
  readonly l: string | null
  readonly n: number
  readonly v: number
  readonly i: string
}
export const BY_UPDATED = 'updated'
export const BY_CREATED = 'created'
/** The order record of `head`, of incarnation `i`. */
export const orderOf = (head: SessionHead, i: string): Order => {
  const m = head.meta
  return {
    s: m.session_id,
    u: m.updated_at,
    c: m.created_at,
    t: m.status,
    k: m.kind,
    l: head.leaf,
    n: m.message_count,
    v: head.v,
    i,
  }
}
/**
 * A session's head from its record and its order record: the record holds what changes rarely,
 * the order record the volatile part as of the last commit (newer than the record's own when
 * an append wrote only an entry and the order record). Neither: absent. Sets the incarnation.
 */
export const headOf = (
  rec: SessionHead | undefined,
  order: Order | undefined,
  incarnations: WeakMap<SessionHead, string>,
): SessionHead | undefined => {
  if (!rec || !order) return rec
  const head: SessionHead =
    order.v > rec.v
      ? {
          ...rec,
          meta: { ...rec.meta, updated_at: order.u, message_count: order.n },
          leaf: order.l,
          v: order.v,
        }
      : rec
  incarnations.set(head, order.i)
  return head
}

export const request = <T>(r: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
// Entries are keyed [session_id, entry_id], so one key range loads or deletes a whole session.
// The whole session, marker included (deletes, stamps):
export const sessionRange = (id: string): IDBKeyRange => IDBKeyRange.bound([id], [id, []])
// Its entries only (entry ids are strings; the marker's key is a number):
const entryRange = (id: string): IDBKeyRange => IDBKeyRange.bound([id, ''], [id, []])
export const isClosed = (e: unknown): boolean => e instanceof DOMException && e.name === 'InvalidStateError'
/** Entries as read: the stamp is this module's business (deleting the last property keeps the object fast). */
const strip = (records: Array<SessionEntry & Stamped>): SessionEntry[] => {
  for (const r of records) if (r.h !== undefined) delete r.h
  return records
}
/**
 * A session's entries as stored, without their stamps: what `entries` and a reader's `entries`
 * return. A session of about `count` entries (a hint: its head's message count) is read in two
 * parts, one from each end of its key range, in this one transaction, where the browser can
 * read backwards (`getAll` with options: Chromium 141+): it reads the second part while this
 * thread decodes the first (10,000 entries: ~90 ms in the browser's database, then ~20 ms of
 * decoding here; W4). The first part is two thirds: what is left to decode once the browser is
 * done is the last third. The parts overlap by one entry when `count` is exact, which proves
 * nothing lies between them; when it is short (custom entries are not counted), what lies
 * between is read too. `first` gets the first part as it lands: the entries returned begin with it.
 */
export const entriesOf = async (
  tx: IDBTransaction,
  id: string,
  count = 0,
  first?: (entries: SessionEntry[]) => void,
): Promise<SessionEntry[]> => {
  const store = tx.objectStore(ENTRIES)
  const query = entryRange(id)
  const all = (q: IDBKeyRange | { query: IDBKeyRange; count: number; direction?: 'prev' }) =>
    request(store.getAll(q as IDBKeyRange) as IDBRequest<Array<SessionEntry & Stamped>>).then(strip)
  const head = (count / 1.5) | 0
  // (A count no session reaches, from a damaged record, is no hint: `getAll` takes 32-bit counts.)
  if (head < 512 || count > 1e9 || !('getAllRecords' in store)) return all(query)
  const [low, high] = await Promise.all([
    all({ query, count: head }).then((part) => (first?.(part), part)),
    all({ query, count: count - head + 1, direction: 'prev' }),
  ])
  // Fewer than asked: the first part is the whole session.
  const last = low[head - 1]?.id
  if (!last) return low
  const lowest = high.at(-1)!.id
  // Still inside the transaction (in a success event's microtasks): the middle is the same disk.
  const middle = lowest > last ? await all(IDBKeyRange.bound([id, last], [id, lowest], true, true)) : []
  return [...low, ...middle, ...high.reverse().filter((e) => e.id > last)]
}
