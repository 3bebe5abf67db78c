import type {
  AttachmentMeta,
  JsonObject,
  EventEnvelope,
  ListOrder,
  SessionEntry,
  SessionKind,
  SessionMeta,
  SessionStatus,
} from '../model/model.js'

/**
 * What is persisted per session besides its entries: the meta, the active leaf, and `v`, a
 * counter bumped by every commit that touches the session. Another tab (or process) that finds
 * a different `v` on disk than in its cache knows its copy is stale and reloads it.
 */
export interface SessionHead {
  readonly meta: SessionMeta
  readonly leaf: string | null
  readonly v: number
  /**
   * The session's attachments (metadata only, sorted by `created_at` then id): small, and what
   * set-draft and list-attachments need synchronously. Their bytes live apart (`BlobWrite`).
   */
  readonly attachments?: readonly AttachmentMeta[]
}

/**
 * Attachment bytes, kept apart from heads and entries and read only on demand. A `copy` takes
 * the bytes another session holds under the same attachment id (fork). A deleted session's bytes
 * go with it, without a write of their own.
 */
export type BlobWrite =
  | { readonly op: 'put'; readonly session_id: string; readonly attachment_id: string; readonly bytes: Blob }
  | {
      readonly op: 'copy'
      readonly session_id: string
      readonly attachment_id: string
      readonly from_session_id: string
    }
  | { readonly op: 'delete'; readonly session_id: string; readonly attachment_id: string }

/** A record for a store beside sessions/entries (the sync outbox, checkpoints), same transaction. */
export interface SideWrite {
  readonly store: string
  /** Omitted in the `outbox` store: keys are assigned in commit order. */
  readonly key?: string | number
  /** `undefined` deletes the record. */
  readonly value: unknown
}

/** Everything one commit writes. Deletions apply first, so a session can be deleted and re-created in one commit. */
export interface WriteSet {
  readonly deleted: ReadonlySet<string>
  readonly heads: ReadonlyMap<string, SessionHead>
  readonly entries: ReadonlyMap<string, ReadonlyMap<string, SessionEntry>>
  readonly side: readonly SideWrite[]
  /** Applied after deletions; a storage without `attachmentBytes` is never handed any. */
  readonly blobs?: readonly BlobWrite[]
  /**
   * The events the commit fires. A storage shared by several processes keeps them for the
   * others (which fire them too); others ignore them.
   */
  readonly events?: readonly EventEnvelope[]
}

/** Reads allowed inside a commit, before its writes: they see what is on disk right now. */
export interface StorageReader {
  head(session_id: string): Promise<SessionHead | undefined>
  entries(session_id: string): Promise<SessionEntry[]>
  /**
   * An encrypted storage's `entries` that leaves each entry's content sealed (see
   * `Storage.sealedEntries`, and its `held`): a commit reads so what it only needs the clear
   * fields of.
   */
  sealedEntries?(session_id: string, held?: ReadonlyMap<string, SessionEntry>): Promise<SessionEntry[]>
  /**
   * Whether `expect` can tell, without reading it, that the disk still holds `head` (a head the
   * engine holds). Optional: without it, every head can. An encrypted storage knows only the
   * heads it read or wrote itself (another tab's, relayed, must be read and opened to compare):
   * the engine reads the others instead of building a batch whose check is bound to fail.
   */
  knows?(head: SessionHead): boolean
  /**
   * Checks, inside the transaction and before it commits, that a session's head on disk passes
   * `ok`, without waiting for the read: it goes out ahead of the writes, and a failed check
   * aborts the whole transaction, which then rejects with `StaleHeadError`. Lets a batch built
   * from memory commit in one round trip. Optional: without it (a wrapper that passes only
   * `head` and `entries`) the engine reads heads with `head` and waits.
   *
   * `held`, optional, is the head the batch was built on (`head: undefined`: the session is
   * absent). A storage that can tell more cheaply than by reading the whole head that the disk
   * holds exactly that head (IndexedDB compares one stamp key) may do so and call `ok(held.head)`;
   * a storage that cannot ignores it. Writes may also be shaped by it (IndexedDB writes only the
   * entry when the head changed only in leaf, counts and `v`).
   */
  expect?(
    session_id: string,
    ok: (disk: SessionHead | undefined) => boolean,
    held?: { readonly head: SessionHead | undefined },
  ): void
  /**
   * Asked after the `expect`s, before the batch runs, by a batch of many new entries: opens the
   * transaction now and returns a function that writes an entry into it at once, so the storage
   * works on the first entries while the batch builds the next ones (all still in this one
   * transaction; the entries given are the batch's final records, and whatever `work` returns is
   * written as usual, those already written skipped). Undefined when the storage cannot tell yet
   * that the transaction needs nothing else (the checks must be decided without a read, and the
   * writes must turn out to touch entries only: if they do not, `transact` rejects with
   * `StaleHeadError` and nothing is written, so the batch runs again the usual way). Optional.
   */
  stream?(): ((session_id: string, entry: SessionEntry) => void) | undefined
}

/**
 * A page of sessions in one of the contract's list orders, read by a storage from its indexes:
 * the first `limit` sessions strictly after `after` (a keyset position: sort key and session id)
 * whose status and kind pass and that `accept` (the metadata filter) takes, in that order.
 */
export interface PageQuery {
  readonly order: ListOrder
  readonly after?: { readonly k: number; readonly id: string }
  readonly status?: SessionStatus | null
  readonly kinds?: readonly SessionKind[] | null
  /** Tested on each candidate that passed status and kind; may throw, which fails the read. */
  readonly accept?: (meta: SessionMeta) => boolean
  /**
   * The metadata filter `accept` tests, when it tests one: a storage may read only the
   * candidates it could match (PostgreSQL reads one owner's rows by its index), and still tests
   * each with `accept`.
   */
  readonly metadata?: JsonObject | null
  readonly limit: number
}

/**
 * Reads of heads on demand, for a storage too large to read whole when it opens (IndexedDB:
 * issue 28). A storage with them returns no heads from `open`; the engine then holds a bounded
 * working set of heads, reads a head before the first operation on its session, and lists
 * sessions a page at a time.
 */
export interface PagedReads {
  /** One session's head as on disk now, or undefined. */
  head(session_id: string): Promise<SessionHead | undefined>
  page(query: PageQuery): Promise<SessionHead[]>
}

/** What `transact` rejects with when a check given to `expect` failed: nothing was written. */
export class StaleHeadError extends Error {
  constructor(readonly session_id: string) {
    super(`the head of ${session_id} changed on disk`)
    this.name = 'StaleHeadError'
  }
}

/**
 * The persistence adapter under the domain service. It is deliberately dumb: every rule about
 * sessions lives in the service. `transact` runs `work` inside one atomic write: `work` may read
 * through the reader, then returns the writes; an adapter must apply all of them or none, and
 * must not resolve before they are durable (to the adapter's durability setting).
 */
export interface Storage {
  /**
   * The database's identity across tabs: stores whose storages share a name share the data, and
   * tabs meet on it (the multi-tab relay, sync's leader lock and status channel, the reply and
   * import locks). Two storages over different data must not share one.
   */
  readonly name: string
  /**
   * Opens the backing store and returns every session head (for `list` and live queries); none
   * for a storage with `paged` reads.
   */
  open(): Promise<SessionHead[]>
  /** Heads on demand (see `PagedReads`): present, the engine never expects every head in memory. */
  readonly paged?: PagedReads
  /**
   * Reads one session's entries outside a commit (first access of a session). `count`, optional,
   * is how many there are likely to be (the head's message count): a hint a storage may use to
   * split the read, never a limit. A storage that reads in parts may hand `first` the first part
   * as soon as it has it: the entries the promise resolves with then begin with exactly those.
   */
  entries(
    session_id: string,
    count?: number,
    first?: (entries: readonly SessionEntry[]) => void,
  ): Promise<SessionEntry[]>
  /**
   * An encrypted storage's `entries` that leaves each entry's content sealed: the entries are
   * held sealed (`model/sealed-entry.ts`: clear fields checked, content unread) until
   * `openEntries` opens them. The engine loads a session so and opens what its reads return.
   * `held`, optional, is what the engine held of the session before reading it again: an opened
   * entry of it whose stored record is exactly the one on disk (the same id, revision, clear
   * fields and box: the same ciphertext) is returned as it is, opened, instead of sealed.
   */
  sealedEntries?(
    session_id: string,
    count?: number,
    first?: (entries: readonly SessionEntry[]) => void,
    held?: ReadonlyMap<string, SessionEntry>,
  ): Promise<SessionEntry[]>
  /**
   * Opens held sealed entries of `session_id` (from `sealedEntries`), in their order: all, or
   * none when one does not open (`session/integrity`) or the store is locked (`session/locked`).
   */
  openEntries?(session_id: string, entries: readonly SessionEntry[]): Promise<SessionEntry[]>
  transact(work: (reader: StorageReader) => Promise<WriteSet>): Promise<void>
  /**
   * Fetches the code this storage writes with, for a storage whose write half is loaded on first
   * use (IndexedDB: `idb-writer.ts`); undefined once it is here. The store fetches it with the
   * engine's batch code, so the first write waits for one round of fetches, not two.
   */
  prepare?(): Promise<unknown> | undefined
  /**
   * True when transactions apply in the order `transact` was called even if one is called before
   * the previous one settled (IndexedDB runs read-write transactions over shared stores in
   * creation order): the engine may then issue a batch while the previous one commits.
   */
  readonly ordered?: boolean
  /**
   * The bytes of one attachment, or undefined (absent: this storage keeps no attachment bytes).
   * `type`, when given, is the type the Blob is read as: a storage that makes the Blob it returns
   * (an encrypted one) makes it of that type, and no copy of it is needed to change it. A promise
   * of it lets the read start before the type is known; `undefined` from it: no type. `size`,
   * when given, is the attachment's size as its metadata says: a storage that opens the bytes
   * into a buffer of its own (an encrypted one) makes that buffer ready while it reads them.
   */
  attachmentBytes?(
    session_id: string,
    attachment_id: string,
    type?: string | Promise<string | undefined>,
    size?: number | Promise<number | undefined>,
  ): Promise<Blob | undefined>
  /** Reads every record of a side store (sync outbox and checkpoints), in key order. */
  sideRecords?(store: string): Promise<Array<{ key: string | number; value: unknown }>>
  /**
   * True for a session the storage holds but could not read on open (a file it cannot read): it
   * is not among the heads, yet it is not gone, so a change log must not record it as deleted.
   */
  unavailable?(session_id: string): boolean
  close(): void
}
