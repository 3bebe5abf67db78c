import {
  SessionError,
  type AttachmentMeta,
  type MetaField,
  type ReplicaChange,
  type SessionMeta,
} from '@colloquy/core'
import type {
  MutationId,
  PullResponse,
  PushMutation,
  PushResponse,
  StreamMessage,
} from '@colloquy/core/protocol'
import {
  olderMetaFields,
  openAttachmentData,
  openAttachmentMeta,
  openEntry,
  openMeta,
  parseSealedMeta,
  sealAttachmentMeta,
  sealEntry,
  sealMeta,
  type EncryptionPolicy,
  type KeySource,
  type SealedField,
  type SealedMeta,
  SEALED_METADATA_KEY,
} from '@colloquy/core/crypto'
import type { Transport } from './transport.js'
import type { IntegrityFailure } from './types.js'
import type { CounterStore, HeldCounters } from './sealed-counters.js'
import type { SentStore } from './sealed-sent.js'
import { digestBlob, sealAttachmentChunks, type UploadBytes } from './attachment-chunks.js'

// End-to-end encrypted sync (docs/encryption.md): with a keyring, every change goes to the server
// sealed and every change from it is opened here, before the sync engine (and its checks) or the
// store see it, so the rest of the engine is the same with encryption on or off. Sealing and
// opening are core's (`@colloquy/core/crypto`); this module only places them on the wire.
//
// A change from the server that does not open (a flipped byte, a value swapped between entries,
// sessions or fields, an older value replayed under a newer revision or counter, a clear record
// where a sealed one belongs) is dropped whole and reported (`integrity$`); the changes around it
// still apply, and the checkpoint moves past it as past any change.

/** The `metadata` key a server's tenancy stamps (`owner`): clear unless the app says otherwise. */
export const DEFAULT_POLICY: EncryptionPolicy = { clearMetadataKeys: ['owner'] }

/** A sealed attachment as the server holds it: its metadata sealed, size and hash of the sealed bytes. */
type WireAttachment = AttachmentMeta & { box: string }

interface Sealing {
  readonly keys: KeySource
  readonly policy: EncryptionPolicy
  readonly report: (failure: Omit<IntegrityFailure, 'at'>) => void
  /**
   * Per session, the newest sealed meta seen (pulled or pushed): the counters a new seal raises,
   * and what an older field replayed whole is refused against.
   */
  readonly metas: Map<string, HeldMeta>
  /** Where the held counters are kept across reloads, if anywhere. */
  readonly counters?: CounterStore
  /** The stored counters read into `metas` (once per `reload()`). */
  loaded?: Promise<void>
  /** Sessions whose held meta changed since the counters were last stored. */
  readonly changed: Set<string>
  /**
   * Attachments sealed for upload, by id: a retried upload and the push that follows name the
   * same sealed bytes. Let go once that push is answered (the outbox then holds it no more).
   * The bytes are a Blob: the store's own (disk-backed) or one of sealed chunks, never a whole
   * buffer here (attachment-chunks.ts).
   */
  readonly uploads: Map<string, { meta: WireAttachment; bytes: Blob }>
  /**
   * Where `keys` are the store's own: an attachment's bytes as the store keeps them at rest,
   * sealed with those keys in the very layout and associated data of an upload, so they are sent
   * as they are (no reseal, and the same ciphertext after any retry or reload).
   */
  readonly stored?: (session_id: string, attachment_id: string) => Promise<Blob | undefined>
  /**
   * Mutations sealed and not answered yet, by id, with the clear change they seal: a retried
   * push (its answer lost, or split after a 413) sends the very same sealed change, which the
   * server answers as unchanged. Sealed anew, it would carry a new box the server takes for a
   * conflicting edit, a conflict of the device with itself.
   */
  readonly sent: Map<MutationId, { readonly clear: string; readonly sealed: ReplicaChange; kept?: boolean }>
  /** Where `sent` is kept across reloads (read back with the counters), if anywhere. */
  readonly sentStore?: SentStore
}

/**
 * A sealed meta held, and `seq`: a position in the server's log known to hold it or a newer
 * form (where it was pulled, or where its push landed; unbounded while that push is unanswered).
 * The server keeps each field's highest counter, so along its log a meta's counters only grow:
 * a meta older than the held one is stale below `seq` (committed before it, and superseded: not
 * applied, not an alarm) and a replay at or above it.
 */
interface HeldMeta {
  readonly meta: SealedMeta
  seq: number
  /**
   * False for counters read back from the store (`meta` then has counters and no boxes): they
   * refuse replays and raise new counters, but a push seals the whole meta, as on a device that
   * holds no sealed form.
   */
  readonly whole: boolean
}

/** The meta fields sealed with a counter of their own, beside the metadata's. */
const COUNTED = ['title', 'description', 'status_reason', 'draft'] as const

/** The counters of a sealed meta, per field. */
function countersOf(meta: SealedMeta): Record<string, number> {
  const revs: Record<string, number> = {}
  for (const f of COUNTED) if (meta[f]) revs[f] = meta[f].rev
  const sealed = meta.metadata?.[SEALED_METADATA_KEY] as SealedField | undefined
  if (sealed) revs.metadata = sealed.rev
  return revs
}

/** A sealed meta's counters as core compares and raises them: its fields with no box. */
function skeleton(session_id: string, revs: Readonly<Record<string, number>>): SealedMeta {
  const out: Record<string, unknown> = { session_id }
  for (const f of COUNTED) if (revs[f] !== undefined) out[f] = { rev: revs[f], box: '' }
  if (revs.metadata !== undefined) out.metadata = { [SEALED_METADATA_KEY]: { rev: revs.metadata, box: '' } }
  return out as unknown as SealedMeta
}

/** The stored counters merged into what is held: a held meta as new as they are, or newer, stays. */
function loaded(s: Sealing): Promise<void> {
  s.loaded ??= (async () => {
    for (const [sid, stored] of (await s.counters?.load()) ?? []) {
      const held = s.metas.get(sid)
      if (held && held.seq >= stored.seq) continue
      s.metas.set(sid, { meta: skeleton(sid, stored.revs), seq: stored.seq, whole: false })
    }
    // Mutations sealed and pushed before a reload: a retry sends what was sent.
    for (const [id, held] of (await s.sentStore?.load()) ?? [])
      if (!s.sent.has(id)) s.sent.set(id, { ...held, kept: true })
  })().catch((e) => {
    s.loaded = undefined
    throw e
  })
  return s.loaded
}

/** Stores the counters of the held metas that changed and sit at a known log position. */
async function storeChanged(s: Sealing): Promise<void> {
  if (!s.counters || !s.changed.size) return
  const out = new Map<string, HeldCounters>()
  for (const sid of s.changed) {
    const held = s.metas.get(sid)
    // A push not yet answered: the server may never hold it, so its counters are not kept.
    if (held && held.seq !== Infinity) out.set(sid, { revs: countersOf(held.meta), seq: held.seq })
  }
  s.changed.clear()
  await s.counters.save(out)
}

const sessionOf = (c: ReplicaChange): string | undefined => {
  const id = c.type === 'meta' ? (c.meta as { session_id?: unknown } | null)?.session_id : c.session_id
  return typeof id === 'string' ? id : undefined
}

/** A sealing transport, and `reload()`: read the stored counters again before its next use. */
export interface SealingTransport extends Transport {
  reload(): void
  /**
   * Uploads an attachment's bytes as the store keeps them sealed at rest, when they are sealed
   * with the keys this transport seals with: true once sent, false when there are none such (the
   * caller then reads the clear Blob and calls `uploadAttachment`).
   */
  uploadStored(session_id: string, attachment: AttachmentMeta): Promise<boolean>
}

/**
 * `inner` with every change sealed on the way out and opened on the way in, under `keys`.
 * `report` hears of every change refused on the way in. With `counters`, the sealed meta
 * counters held are kept there, and read back on first use and after `reload()` (a tab that
 * starts leading), so a device that reloads still refuses an older meta replayed to it.
 */
export function sealingTransport(
  inner: Transport,
  keys: KeySource,
  report: Sealing['report'],
  policy: EncryptionPolicy = DEFAULT_POLICY,
  counters?: CounterStore,
  sentStore?: SentStore,
  stored?: Sealing['stored'],
): SealingTransport {
  const s: Sealing = {
    keys,
    policy,
    report,
    metas: new Map(),
    uploads: new Map(),
    sent: new Map(),
    ...(counters && { counters }),
    ...(sentStore && { sentStore }),
    ...(stored && { stored }),
    changed: new Set(),
  }
  const upload = inner.uploadAttachment?.bind(inner)
  const out: SealingTransport = {
    reload() {
      s.loaded = undefined
    },
    async uploadStored(session_id, attachment) {
      if (!upload) return false
      const sealed = await storedUpload(s, attachment)
      if (!sealed) return false
      await upload(session_id, sealed.meta, sealed.bytes)
      return true
    },
    async push(request) {
      await loaded(s)
      const mutations = []
      for (const m of request.mutations) mutations.push({ id: m.id, change: await sealedOnce(s, m) })
      await keepSent(s, request.mutations)
      const answer = await inner.push({ ...request, mutations })
      // Answered, whatever the answer: a later push of the same id is a new change.
      const forget: MutationId[] = []
      for (const m of request.mutations) {
        if (s.sent.get(m.id)?.kept) forget.push(m.id)
        s.sent.delete(m.id)
        if (m.change.type === 'attachment') s.uploads.delete(m.change.attachment.attachment_id)
      }
      await s.sentStore?.save(new Map(), forget)
      const results = (answer as { results?: unknown }).results
      if (Array.isArray(results))
        for (const [i, r] of (results as Array<{ status?: unknown; seq?: unknown } | null>).entries()) {
          const change = mutations[i]?.change
          if (change?.type !== 'meta') continue
          if (r?.status === 'applied' || r?.status === 'unchanged') {
            if (typeof r.seq === 'number') landed(s, change, r.seq)
          } else refusedMeta(s, change)
        }
      await storeChanged(s)
      return openPushAnswer(s, request.mutations, answer)
    },
    async pull(since, limit, epoch) {
      await loaded(s)
      const page = await openPage(s, await inner.pull(since, limit, epoch))
      await storeChanged(s)
      return page
    },
    stream(since, onMessage, onClose, epoch) {
      // Opening is asynchronous: frames are handed on one at a time, in the order they came.
      // A step that fails (it should not: refusals are reported, not thrown) ends the stream
      // with its error, and the loop pulls from the checkpoint, as after any stream failure.
      let queue = Promise.resolve()
      let stopped = false
      let ended = false
      const end = (error?: unknown): void => {
        if (ended) return
        ended = true
        onClose(error)
      }
      const fail = (e: unknown): void => {
        if (ended) return
        stopped = true
        handle.close()
        end(e)
      }
      const handle = inner.stream(
        since,
        (m) => {
          queue = queue
            .then(async () => {
              await loaded(s)
              const opened = await openPage(s, m)
              await storeChanged(s)
              if (!stopped && !ended) onMessage(opened)
            })
            .catch(fail)
        },
        (error) => {
          queue = queue.then(() => end(error))
        },
        epoch,
      )
      return {
        close() {
          stopped = true
          handle.close()
        },
      }
    },
  }
  if (upload)
    out.uploadAttachment = async (session_id, attachment, bytes) => {
      const sealed = await sealUpload(s, attachment, bytes)
      await upload(session_id, sealed.meta, sealed.bytes)
    }
  if (inner.downloadAttachment) {
    const download = inner.downloadAttachment.bind(inner)
    out.downloadAttachment = async (session_id, attachment_id) => {
      const blob = await download(session_id, attachment_id)
      if (!blob) return null
      try {
        const sealed = new Uint8Array(await blob.arrayBuffer())
        // Chunked as this module uploads; one envelope as uploaded before it did.
        const pieces = await openAttachmentData(keys, session_id, attachment_id, sealed)
        return new Blob(pieces as Uint8Array<ArrayBuffer>[])
      } catch (e) {
        if (!(e instanceof SessionError)) throw e
        report({
          session_id,
          change: 'attachment',
          id: attachment_id,
          code: 'session/integrity',
          message: e.message,
        })
        return null
      }
    }
  }
  return out
}

/** An attachment sealed once per id: a retried upload and the push after it name the same bytes. */
async function sealUpload(
  s: Sealing,
  attachment: AttachmentMeta,
  bytes: Blob,
): Promise<{ meta: WireAttachment; bytes: Blob }> {
  const held = s.uploads.get(attachment.attachment_id)
  if (held) return held
  return heldUpload(
    s,
    attachment,
    await sealAttachmentChunks(s.keys, attachment.session_id, attachment.attachment_id, bytes),
  )
}

/**
 * The bytes the store keeps sealed at rest, ready to upload as they are (hashed as a stream,
 * never read whole), or undefined when the store keeps none under these keys.
 */
async function storedUpload(
  s: Sealing,
  attachment: AttachmentMeta,
): Promise<{ meta: WireAttachment; bytes: Blob } | undefined> {
  const held = s.uploads.get(attachment.attachment_id)
  if (held) return held
  const blob = await s.stored?.(attachment.session_id, attachment.attachment_id)
  if (!blob) return undefined
  return heldUpload(s, attachment, await digestBlob(blob))
}

/** `sealed` named on the wire (metadata sealed, size and hash of the sealed bytes), held until its push is answered. */
async function heldUpload(
  s: Sealing,
  attachment: AttachmentMeta,
  sealed: UploadBytes,
): Promise<{ meta: WireAttachment; bytes: Blob }> {
  const meta: WireAttachment = {
    ...(await sealAttachmentMeta(s.keys, attachment)),
    name: '',
    mime: 'application/octet-stream',
    size: sealed.size,
    sha256: sealed.sha256,
  }
  const out = { meta, bytes: sealed.bytes }
  s.uploads.set(attachment.attachment_id, out)
  return out
}

/**
 * What `sealMeta` raises counters from: `held` with the fields about to be sealed at no less than
 * the clock. A field's counter is a replica's to compare (the highest is kept, as revisions are),
 * so it must grow past what any device sealed before, also on a device that restarted and holds
 * no sealed form yet: the clock gives that, the held counter plus one the order on one device.
 */
function raised(
  session_id: string,
  held: SealedMeta | undefined,
  fields: readonly MetaField[] | undefined,
): SealedMeta {
  const floor = Date.now() - 1
  const out = { ...(held ?? { session_id }) } as SealedMeta & Record<string, unknown>
  for (const f of COUNTED) {
    if (fields && !fields.includes(f)) continue
    out[f] = { rev: Math.max(held?.[f]?.rev ?? 0, floor), box: held?.[f]?.box ?? '' }
  }
  if (!fields || fields.includes('metadata')) {
    const old = held?.metadata?.[SEALED_METADATA_KEY] as SealedField | undefined
    out.metadata = {
      ...held?.metadata,
      [SEALED_METADATA_KEY]: { rev: Math.max(old?.rev ?? 0, floor), box: old?.box ?? '' },
    }
  }
  return out
}

/** `m` sealed, or as it was sealed for a push not answered yet if it is still the same change. */
async function sealedOnce(s: Sealing, m: PushMutation): Promise<ReplicaChange> {
  const clear = JSON.stringify(m.change)
  const held = s.sent.get(m.id)
  if (held?.clear === clear) return held.sealed
  const sealed = await sealChange(s, m.change)
  s.sent.set(m.id, { clear, sealed })
  return sealed
}

/**
 * Keeps the sealed forms of `mutations` not kept yet, before they are pushed. An attachment's
 * is not: it names the sealed bytes of its upload, which after a reload are the store's again
 * (`stored`: the same bytes) or sealed anew.
 */
async function keepSent(s: Sealing, mutations: readonly PushMutation[]): Promise<void> {
  if (!s.sentStore) return
  const put = new Map<MutationId, { clear: string; sealed: ReplicaChange }>()
  for (const m of mutations) {
    const held = s.sent.get(m.id)
    if (!held || held.kept || m.change.type === 'attachment') continue
    put.set(m.id, { clear: held.clear, sealed: held.sealed })
    held.kept = true
  }
  await s.sentStore.save(put, [])
}

async function sealChange(s: Sealing, c: ReplicaChange): Promise<ReplicaChange> {
  switch (c.type) {
    case 'meta': {
      const sid = c.meta.session_id
      // Metadata is always sealed (an empty object too): a server's tenancy stamps its owner in
      // beside the sealed part, never in place of it.
      const meta: SessionMeta = { ...c.meta, metadata: c.meta.metadata ?? {} }
      const held = s.metas.get(sid)
      const form = held?.whole ? held.meta : undefined
      const sealed = await sealMeta(s.keys, meta, {
        policy: s.policy,
        previous: raised(sid, held?.meta, form ? c.fields : undefined),
        ...(form && c.fields && { changed: c.fields }),
      })
      // What the server holds once this lands: the fields pushed, and the held rest. Without a
      // held form (a device that restarted), only a whole meta says that; for some fields the
      // server keeps its own others, which the next pull brings.
      if (form || !c.fields) s.metas.set(sid, { meta: sealed, seq: Infinity, whole: true })
      return { ...c, meta: sealed as unknown as SessionMeta }
    }
    case 'entry':
      return { ...c, entry: (await sealEntry(s.keys, c.session_id, c.entry)) as never }
    case 'attachment': {
      // Sealed at its upload, just before (push.ts uploads an attachment before pushing it).
      const held = s.uploads.get(c.attachment.attachment_id)
      if (held) return { ...c, attachment: held.meta }
      // Not uploaded (its bytes went meanwhile): its metadata alone, which the server refuses.
      const meta = await sealAttachmentMeta(s.keys, c.attachment)
      return {
        ...c,
        attachment: { ...meta, name: '', mime: 'application/octet-stream', size: 0, sha256: '' },
      }
    }
    default:
      return c
  }
}

/**
 * A change from the server, opened; undefined when it does not open (reported) or is a meta
 * older than one held and committed before it (superseded, not reported).
 */
async function openChange(s: Sealing, c: ReplicaChange, seq?: number): Promise<ReplicaChange | undefined> {
  try {
    switch (c.type) {
      case 'meta': {
        const incoming = parseSealedMeta(c.meta, 'meta')
        const held = s.metas.get(incoming.session_id)
        const older = held ? olderMetaFields(held.meta, incoming) : []
        // Committed before a form already held: superseded (the sync engine drops it too).
        if (older.length && seq !== undefined && seq < held!.seq) return undefined
        if (older.length)
          throw new SessionError(
            'session/integrity',
            `meta of session ${incoming.session_id}: ${older.join(', ')} older than already seen (replayed)`,
          )
        const meta = await openMeta(s.keys, incoming, s.policy)
        s.metas.set(incoming.session_id, { meta: incoming, seq: seq ?? held?.seq ?? 0, whole: true })
        s.changed.add(incoming.session_id)
        return { ...c, meta }
      }
      case 'entry':
        return { ...c, entry: await openEntry(s.keys, c.session_id, c.entry) }
      case 'attachments': {
        const attachments = []
        for (const a of c.attachments) {
          if (a.session_id !== c.session_id)
            throw new SessionError('session/integrity', `attachment ${a.attachment_id} of another session`)
          attachments.push(await openAttachmentMeta(s.keys, a))
        }
        return { ...c, attachments }
      }
      case 'attachment':
        return { ...c, attachment: await openAttachmentMeta(s.keys, c.attachment) }
      default:
        return c
    }
  } catch (e) {
    // What the server sent is not a value a writer holding the keys sealed there (a record that
    // is not even the sealed shape included): refused, never thrown on into the sync loop.
    s.report({
      ...(seq !== undefined && { seq }),
      session_id: sessionOf(c) ?? '',
      change: String(c.type),
      ...(c.type === 'entry' && typeof c.entry?.id === 'string' && { id: c.entry.id }),
      code: 'session/integrity',
      message: (e instanceof Error ? e.message : String(e)).replace(/^session\/[a-z_]+: /, ''),
    })
    return undefined
  }
}

/** A pull page or stream frame with its changes opened (those that do not open left out). */
async function openPage<T extends PullResponse | StreamMessage>(s: Sealing, page: T): Promise<T> {
  const changes = (page as { changes?: unknown }).changes
  // Anything but a list of changes is the protocol check's to refuse (answers.ts), as it is.
  if (!Array.isArray(changes)) return page
  const opened = []
  for (const sc of changes as Array<{ seq: number; change: ReplicaChange }>) {
    if (typeof sc !== 'object' || sc === null || typeof sc.change !== 'object' || sc.change === null) {
      opened.push(sc)
      continue
    }
    const change = await openChange(s, sc.change, sc.seq)
    if (change) opened.push({ ...sc, change })
  }
  return { ...page, changes: opened }
}

/** Where a pushed meta landed in the server's log, if it is still the form held. */
function landed(s: Sealing, sent: ReplicaChange & { type: 'meta' }, seq: number): void {
  const held = s.metas.get(sent.meta.session_id)
  if (held && held.seq === Infinity && (held.meta as unknown) === sent.meta) {
    held.seq = seq
    s.changed.add(sent.meta.session_id)
  }
}

/**
 * A pushed meta the server did not take: the server never held it, so the device holds no form
 * of that session's meta (as one that restarted) until it pulls one. Kept, its counters would
 * make every later meta of the session look older, and be dropped.
 */
function refusedMeta(s: Sealing, sent: ReplicaChange & { type: 'meta' }): void {
  const held = s.metas.get(sent.meta.session_id)
  if (held && held.seq === Infinity && (held.meta as unknown) === sent.meta)
    s.metas.delete(sent.meta.session_id)
}

/**
 * A push answer with the server's versions in conflicts opened. One that does not open is
 * reported, and the mutation answered as refused (`rejected$` keeps it, like any refusal).
 */
async function openPushAnswer(
  s: Sealing,
  sent: readonly { change: ReplicaChange }[],
  answer: PushResponse,
): Promise<PushResponse> {
  const results = (answer as { results?: unknown }).results
  if (!Array.isArray(results)) return answer
  const out = []
  for (const [i, r] of (results as PushResponse['results'][number][]).entries()) {
    const change = sent[i]?.change
    if (r?.status !== 'conflict' || change?.type !== 'entry') {
      out.push(r)
      continue
    }
    try {
      out.push({ ...r, current: await openEntry(s.keys, change.session_id, r.current) })
    } catch (e) {
      if (!(e instanceof SessionError)) throw e
      s.report({
        session_id: change.session_id,
        change: 'entry',
        id: change.entry.id,
        code: 'session/integrity',
        message: e.message,
      })
      out.push({ id: r.id, status: 'rejected', code: 'session/integrity', message: e.message } as never)
    }
  }
  return { ...answer, results: out }
}
