import type { AttachmentMeta, Json, SessionEntry, SessionMeta } from '../../model/model.js'
import type { MetaField } from '../../model/replica-change.js'
import { SessionError } from '../../model/errors.js'
import { jsonEqual } from '../../model/json.js'
import { openJson, sealJson, type KeySource } from '../../crypto/envelope.js'
import { holdEntry, openEntry, sealEntry } from '../../crypto/entry-seal.js'
import { openMeta, sealMeta } from '../../crypto/meta-seal.js'
import {
  openAttachmentMeta,
  openAttachmentWhole,
  sealAttachmentData,
  sealAttachmentMeta,
} from '../../crypto/attachment-seal.js'
import { OpenedBlob } from './opened-blob.js'
import { openedRecords } from './opened-records.js'
import { sealedRecordOf } from '../../model/sealed-entry.js'
import { readBytes } from '../../attachments/read-bytes.js'
import { warmBuffer } from '../../util/warm-buffer.js'
import type { EncryptionPolicy } from '../../crypto/policy.js'
import type { SealedAttachmentMeta, SealedEntry, SealedMeta } from '../../crypto/sealed-records.js'
import {
  StaleHeadError,
  type BlobWrite,
  type PageQuery,
  type SessionHead,
  type SideWrite,
  type Storage,
  type StorageReader,
  type WriteSet,
} from '../seam.js'

// A storage that seals what it writes and opens what it reads, over any other storage (the
// seam's composition: IndexedDB and memory know nothing of it). The engine above holds
// plaintext in memory only; every record handed below is in the stored forms of
// docs/encryption.md: heads with a sealed meta and sealed attachment metadata, sealed entries,
// sealed attachment bytes, and side records (sync's outbox and checkpoints) sealed whole.
//
// Crypto is asynchronous and an IndexedDB transaction ends when it waits on anything but its
// own requests, so nothing is sealed or opened inside one: reads inside a commit are taken
// outside it and checked inside it (`expect`: the head on disk must still be the one read, or
// the commit is aborted and runs again), and the writes are sealed before the transaction opens.

/** The side keys the encryption layer keeps for itself (clear: a keyring is wrapped, not secret). */
export const RESERVED_SIDE_KEY = /^colloquy:/

/** What every read and write meets while the store is locked. */
export const lockedError = (): SessionError =>
  new SessionError('session/locked', 'the store is locked: unlock it with its passphrase or key')

/** A head as stored: its meta and attachment metadata sealed. */
interface StoredHead {
  readonly meta: SealedMeta
  readonly leaf: string | null
  readonly v: number
  readonly attachments?: readonly SealedAttachmentMeta[]
}

const SEALED_FIELDS: readonly MetaField[] = [
  'title',
  'description',
  'status_reason',
  'draft',
  'metadata',
  'draft_attachments',
]

/** A commit's own rereads that found the disk changed: run again (a few times) before giving up. */
const READ_RETRIES = 5

/** Whether two stored heads are the same record (the same boxes: the same plaintext). */
const sameStored = (a: SessionHead | undefined, b: SessionHead | undefined): boolean =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.v === b.v &&
    a.leaf === b.leaf &&
    jsonEqual(a.meta, b.meta) &&
    jsonEqual(a.attachments ?? null, b.attachments ?? null))

// Outbox records are keyed in commit order by the storage (a write names no key): sealed without it.
export const sideContext = (store: string, key: string | number | undefined) => ({
  session_id: '',
  entry_id: key === undefined || store === 'outbox' ? '' : `${typeof key}:${key}`,
  revision: 0,
  field: `side.${store}`,
})

export interface SealedStorageOptions {
  /** The keys to seal and open with; throws `session/locked` while there are none. */
  keys(): KeySource
  policy?: EncryptionPolicy
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Entries sealed ahead of their commit's write set, by the very entry object they were sealed from. */
interface EarlySeals {
  /** Starts sealing `entry` of `session_id` now. */
  put(session_id: string, entry: SessionEntry): void
  /** The sealing started for this very entry of this session, if any. */
  take(session_id: string, entry: SessionEntry): Promise<SealedEntry> | undefined
}

/**
 * A batch of many appends hands its entries over as it builds them (`StorageReader.stream`).
 * The storage below cannot take them yet (its transaction would end while they are sealed:
 * no crypto inside a transaction), but their sealing can start at once: the encryption runs on
 * Web Crypto's own thread while this one builds the next entries, and the write set, once
 * returned, waits only for the last of them. Entries are immutable records, so the seal
 * started for an object is the seal of what the write set holds under that object; an entry
 * changed later in the batch is a new object and is sealed on its own.
 */
function earlySeals(k: KeySource): EarlySeals {
  const started = new Map<SessionEntry, { session_id: string; sealed: Promise<SealedEntry> }>()
  return {
    put(session_id, entry) {
      const sealed = sealEntry(k, session_id, entry, 'bytes')
      // Told here if it fails; the write set's own wait reports it.
      sealed.catch(() => undefined)
      started.set(entry, { session_id, sealed })
    },
    take(session_id, entry) {
      const s = started.get(entry)
      return s && s.session_id === session_id ? s.sealed : undefined
    },
  }
}

/** `inner`, sealing every record it writes and opening every record it reads. */
export function sealedStorage(inner: Storage, options: SealedStorageOptions): Storage {
  const { keys, policy } = options
  /**
   * The stored form of each head the engine holds (read or written here), and back: the
   * storage below trusts heads by identity (IndexedDB's stamp check), so the engine's plaintext
   * head must map to the very record the storage wrote or read. Weak: the working set decides
   * what lives.
   */
  const storedOf = new WeakMap<SessionHead, SessionHead>()
  const plainOf = new WeakMap<SessionHead, SessionHead>()
  const pair = (plain: SessionHead, stored: SessionHead): SessionHead => {
    storedOf.set(plain, stored)
    plainOf.set(stored, plain)
    return plain
  }

  const openHead = async (stored: SessionHead): Promise<SessionHead> => {
    const known = plainOf.get(stored)
    if (known) return known
    const k = keys()
    const s = stored as unknown as StoredHead
    const [meta, attachments] = await Promise.all([
      openMeta(k, s.meta, policy),
      s.attachments && Promise.all(s.attachments.map((a) => openAttachmentMeta(k, a))),
    ])
    if (meta.session_id !== s.meta.session_id)
      throw new SessionError('session/integrity', `the head of ${s.meta.session_id} holds another session`)
    for (const a of attachments ?? [])
      if (a.session_id !== meta.session_id)
        throw new SessionError(
          'session/integrity',
          `an attachment of session ${a.session_id} in ${meta.session_id}`,
        )
    return pair({ meta, leaf: s.leaf, v: s.v, ...(attachments && { attachments }) }, stored)
  }
  const openHeadOrNone = (stored: SessionHead | undefined) => (stored ? openHead(stored) : undefined)

  /** The records opened entries came from, so a session read again keeps them (`sealedEntries`' `held`). */
  const records = openedRecords()

  const openEntries = async (
    session_id: string,
    stored: readonly SessionEntry[],
  ): Promise<SessionEntry[]> => {
    const k = keys()
    const plain = await Promise.all(stored.map((e) => openEntry(k, session_id, e)))
    // Opened: the record checked (a held one's was checked when it was read).
    for (let i = 0; i < plain.length; i++)
      records.note(session_id, plain[i], sealedRecordOf(stored[i]) ?? (stored[i] as unknown as SealedEntry))
    return plain
  }

  /** Stored records held sealed, or as the opened entry of `held` each still is (see `OpenedRecords`). */
  const hold = (
    session_id: string,
    stored: readonly unknown[],
    held: ReadonlyMap<string, SessionEntry> | undefined,
  ): SessionEntry[] =>
    held ? stored.map((r) => records.keep(session_id, holdEntry(r), held)) : stored.map(holdEntry)

  /** Seals `head`, keeping every box of `base` (its stored form) whose plaintext did not change. */
  const sealHead = async (head: SessionHead, base: SessionHead | undefined): Promise<SessionHead> => {
    const k = keys()
    const prev = base && storedOf.get(base)
    const was = prev as StoredHead | undefined
    let meta: SealedMeta
    if (base && was && base.meta === head.meta) meta = was.meta
    else {
      const changed =
        base && was ? SEALED_FIELDS.filter((f) => !jsonEqual(base.meta[f], head.meta[f])) : undefined
      meta = await sealMeta(k, head.meta as SessionMeta, {
        policy,
        ...(was && changed && { previous: was.meta, changed }),
      })
    }
    let attachments: readonly SealedAttachmentMeta[] | undefined
    if (head.attachments) {
      if (base && was && base.attachments === head.attachments) attachments = was.attachments
      else {
        // Attachment metadata never changes: what was sealed before is kept as it was.
        const held = new Map(was?.attachments?.map((a) => [a.attachment_id, a]))
        attachments = await Promise.all(
          head.attachments.map(
            (a: AttachmentMeta) =>
              (a.session_id === head.meta.session_id && held.get(a.attachment_id)) ||
              sealAttachmentMeta(k, a),
          ),
        )
      }
    }
    const stored = {
      meta,
      leaf: head.leaf,
      v: head.v,
      ...(attachments && { attachments }),
    } as unknown as SessionHead
    pair(head, stored)
    return stored
  }

  // Attachment bytes: sealed in chunks from the Blob as it is read (never joined whole), opened
  // chunk by chunk into the one buffer the Blob a read returns is made of and answers its first
  // read with (crypto/attachment-chunks.ts, opened-blob.ts).
  const sealBlob = async (b: BlobWrite): Promise<BlobWrite> => {
    if (b.op === 'delete') return b
    let plain: Blob | Uint8Array
    // Bytes a put already read (to hash them) are sealed as they are, not read again.
    if (b.op === 'put') plain = readBytes.get(b.bytes) ?? b.bytes
    else {
      // The bytes are bound to their session: a fork's copy is opened and sealed again for its own.
      const from = await openBlob(b.from_session_id, b.attachment_id)
      if (!from) return b
      plain = from
    }
    return {
      op: 'put',
      session_id: b.session_id,
      attachment_id: b.attachment_id,
      bytes: await sealAttachmentData(keys(), b.session_id, b.attachment_id, plain),
    }
  }

  const openBlob = async (
    session_id: string,
    attachment_id: string,
    type?: string | Promise<string | undefined>,
    size?: number | Promise<number | undefined>,
  ): Promise<Blob | undefined> => {
    const k = keys()
    const reading = inner.attachmentBytes?.(session_id, attachment_id)
    // The buffer the bytes open into, its pages touched while they are read (warm-buffer.ts):
    // made only if the size is known before the sealed bytes are here.
    let ready: ReturnType<typeof warmBuffer> | undefined
    let here = false
    void Promise.resolve(size).then(
      (n) => {
        if (!here && n !== undefined && Number.isSafeInteger(n) && n > 0) ready = warmBuffer(n)
      },
      () => {},
    )
    let sealed: Uint8Array
    try {
      const blob = await reading
      if (!blob) return undefined
      sealed = new Uint8Array(await blob.arrayBuffer())
    } finally {
      here = true
      ready?.stop()
    }
    const opened = await openAttachmentWhole(k, session_id, attachment_id, sealed, ready?.bytes)
    return new OpenedBlob(opened, await type)
  }

  const sealSide = async (s: SideWrite): Promise<SideWrite> => {
    if (typeof s.key === 'string' && RESERVED_SIDE_KEY.test(s.key))
      throw new SessionError('session/invalid_request', `side record ${s.key}: the key is reserved`)
    if (s.value === undefined) return s
    return { ...s, value: { $sealed: await sealJson(keys(), s.value as Json, sideContext(s.store, s.key)) } }
  }

  /** Seals a commit's writes; `bases` are the heads it was built on, where known. */
  const sealWrites = async (
    w: WriteSet,
    bases: ReadonlyMap<string, SessionHead | undefined>,
    early: EarlySeals,
  ): Promise<WriteSet> => {
    const k = keys()
    const heads = new Map<string, SessionHead>()
    const entries = new Map<string, Map<string, SessionEntry>>()
    await Promise.all([
      ...[...w.heads].map(async ([id, head]) => {
        heads.set(id, await sealHead(head, w.deleted.has(id) ? undefined : bases.get(id)))
      }),
      ...[...w.entries].map(async ([id, batch]) => {
        const plain = [...batch.values()]
        const sealed = await Promise.all(plain.map((e) => early.take(id, e) ?? sealEntry(k, id, e, 'bytes')))
        for (let i = 0; i < plain.length; i++) records.note(id, plain[i], sealed[i])
        entries.set(id, new Map(sealed.map((e) => [e.id, e as unknown as SessionEntry])))
      }),
    ])
    // Maps keep the commit's order (the storage stamps the last entry of a session).
    const inOrder = <V>(m: Map<string, V>, order: Iterable<string>) =>
      new Map([...order].filter((id) => m.has(id)).map((id) => [id, m.get(id)!]))
    const [blobs, side] = await Promise.all([
      w.blobs && Promise.all(w.blobs.map(sealBlob)),
      Promise.all(w.side.map(sealSide)),
    ])
    return {
      deleted: w.deleted,
      heads: inOrder(heads, w.heads.keys()),
      entries: inOrder(entries, w.entries.keys()),
      side,
      ...(blobs && { blobs }),
      ...(w.events && { events: w.events }),
    }
  }

  const transact = async (
    work: (reader: StorageReader) => Promise<WriteSet>,
    attempt: number,
  ): Promise<void> => {
    // Set when this attempt read a head itself (and checks it in the transaction).
    let reread = false
    try {
      await inner.transact(async (r) => {
        keys()
        reread = false
        const bases = new Map<string, SessionHead | undefined>()
        const checked = new Map<string, Promise<SessionHead | undefined>>()
        const paged = inner.paged
        /** A head read outside the transaction and checked inside it (see the top of this file). */
        const headOf = (id: string): Promise<SessionHead | undefined> => {
          let p = checked.get(id)
          if (!p) {
            p = (paged ? paged.head(id) : r.head(id)).then(async (stored) => {
              if (paged) {
                reread = true
                r.expect!(id, (disk) => sameStored(stored, disk), { head: stored })
              }
              const plain = await openHeadOrNone(stored)
              bases.set(id, plain)
              return plain
            })
            checked.set(id, p)
          }
          return p
        }
        const reader: Mutable<StorageReader> = {
          head: headOf,
          // The head first: a commit since then changes it, and the check catches that.
          entries: async (id) => {
            await headOf(id)
            return openEntries(id, await (paged ? inner.entries(id) : r.entries(id)))
          },
          knows: (head) => storedOf.has(head),
          // The same, held sealed: nothing is opened inside a commit that needs clear fields only.
          sealedEntries: async (id, held) => {
            await headOf(id)
            return hold(id, await (paged ? inner.entries(id) : r.entries(id)), held)
          },
          ...(r.expect && {
            expect(id, ok, held) {
              const stored = held?.head && storedOf.get(held.head)
              if (held) bases.set(id, held.head)
              r.expect!(
                id,
                (disk) => {
                  if (!disk) return ok(undefined)
                  const plain = plainOf.get(disk)
                  if (plain) return ok(plain)
                  // Not a record read or written here (another tab wrote it): unless it is the
                  // very record the held head was sealed as, the commit runs again reading it.
                  return held?.head !== undefined && stored !== undefined && sameStored(stored, disk)
                    ? ok(held.head)
                    : false
                },
                held && (held.head === undefined ? held : stored ? { head: stored } : undefined),
              )
            },
          }),
        }
        if (paged && !r.expect)
          throw new SessionError(
            'session/storage',
            `${inner.name}: a paged storage without checks cannot be sealed`,
          )
        const early = earlySeals(keys())
        // A burst's entries are sealed as the batch builds them (see `earlySeals`).
        if (r.expect) reader.stream = () => early.put
        return sealWrites(await work(reader), bases, early)
      })
    } catch (e) {
      if (e instanceof StaleHeadError && reread && attempt < READ_RETRIES) return transact(work, attempt + 1)
      throw e
    }
  }

  /** A page of heads whose metadata filter runs on the opened meta (it cannot run on boxes). */
  const page = async (q: PageQuery): Promise<SessionHead[]> => {
    const paged = inner.paged!
    if (!q.accept) return Promise.all((await paged.page(q)).map(openHead))
    const out: SessionHead[] = []
    let after = q.after
    while (out.length < q.limit) {
      const want = Math.min(Math.max(q.limit - out.length, 16), 1000)
      // The metadata hint goes too: the stored metadata values are boxes it cannot match.
      const { accept: _, metadata: _hint, ...rest } = q
      const stored = await paged.page({ ...rest, ...(after && { after }), limit: want })
      for (const head of await Promise.all(stored.map(openHead)))
        if (out.length < q.limit && q.accept(head.meta)) out.push(head)
      if (stored.length < want) break
      const last = (stored[stored.length - 1] as unknown as StoredHead).meta
      after = { k: q.order === 'updated_desc' ? last.updated_at : last.created_at, id: last.session_id }
    }
    return out
  }

  const sealed: Storage = {
    name: inner.name,
    ...(inner.ordered !== undefined && { ordered: inner.ordered }),
    ...(inner.prepare && { prepare: () => inner.prepare!() }),
    async open() {
      keys()
      return Promise.all((await inner.open()).map(openHead))
    },
    ...(inner.paged && {
      paged: {
        head: async (id) => {
          keys()
          return openHeadOrNone(await inner.paged!.head(id))
        },
        page: async (q) => {
          keys()
          return page(q)
        },
      },
    }),
    async entries(id, count, first) {
      keys()
      // The first part the storage hands over (see `Storage.entries`) is opened while the rest
      // is read: the decryption overlaps the browser's reading instead of following it (W4).
      let part: { size: number; opened: Promise<SessionEntry[]> } | undefined
      const stored = await inner.entries(id, count, (entries) => {
        const opened = openEntries(id, entries)
        if (first) opened.then(first, () => undefined)
        part = { size: entries.length, opened }
      })
      if (!part) return openEntries(id, stored)
      const [head, rest] = await Promise.all([part.opened, openEntries(id, stored.slice(part.size))])
      return head.concat(rest)
    },
    async sealedEntries(id, count, first, held) {
      keys()
      // Nothing is opened here: the engine opens what its reads return (`openEntries`).
      let part: SessionEntry[] | undefined
      const stored = await inner.entries(id, count, (entries) => {
        part = hold(id, entries, held)
        first?.(part)
      })
      return part ? part.concat(hold(id, stored.slice(part.length), held)) : hold(id, stored, held)
    },
    async openEntries(id, held) {
      const plain = await openEntries(id, held)
      // A lock while they were opened: the keys they were opened with are gone, and so is this.
      keys()
      return plain
    },
    transact: (work) => transact(work, 0),
    ...(inner.attachmentBytes && {
      attachmentBytes: openBlob,
    }),
    ...(inner.sideRecords && {
      async sideRecords(store) {
        const k = keys()
        const records = await inner.sideRecords!(store)
        const out: Array<{ key: string | number; value: unknown }> = []
        for (const { key, value } of records) {
          if (typeof key === 'string' && RESERVED_SIDE_KEY.test(key)) continue
          const box = (value as { $sealed?: unknown } | null)?.$sealed
          if (typeof box !== 'string')
            throw new SessionError('session/integrity', `side record ${store}/${String(key)} is not sealed`)
          out.push({ key, value: await openJson(k, box, sideContext(store, key)) })
        }
        return out
      },
    }),
    ...(inner.unavailable && { unavailable: (id) => inner.unavailable!(id) }),
    close: () => inner.close(),
  }
  return sealed
}
