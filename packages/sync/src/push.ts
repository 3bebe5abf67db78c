import type { AttachmentMeta, ReplicaChange, SessionMeta, SideWrite } from '@colloquy/core'
import { hostOf } from '@colloquy/core/host'
import { parentsFirst, type PushResult } from '@colloquy/core/protocol'
import { checkPush } from './answers.js'
import { kept, rejection, resolve } from './conflicts.js'
import { hold, placed, release, unhold, withoutPending } from './echoes.js'
import { OUTBOX, coalesce, queued, type Coalesced } from './outbox.js'
import { KV, kv, outbox, serially, setStatus, type Replication } from './state.js'
import { TransportError } from './transport.js'
import type { Conflict, Rejection } from './types.js'

/** Set once the sessions this store held before sync first ran are queued. */
const SEEDED = 'sync:seeded'

/** Queues every session this store already held before sync first ran. */
export async function seed(s: Replication): Promise<void> {
  if ((await kv(s)).has(SEEDED)) return
  const { store } = s
  const host = hostOf(store)
  const side: SideWrite[] = []
  const all: SessionMeta[] = []
  let cursor: string | undefined
  do {
    const page = await store.list({ limit: 500, order: 'created_asc', cursor })
    all.push(...page.sessions)
    cursor = page.next_cursor
  } while (cursor)
  for (const meta of all) {
    side.push(queued({ type: 'meta', meta, create: true }, s.now()))
    await host.load(meta.session_id)
    const leaf = host.head(meta.session_id)?.leaf
    for (const entry of parentsFirst(host.entries(meta.session_id)?.values() ?? []))
      side.push(queued({ type: 'entry', session_id: meta.session_id, entry, base_revision: null }, s.now()))
    if (leaf) side.push(queued({ type: 'leaf', session_id: meta.session_id, entry_id: leaf }, s.now()))
  }
  side.push({ store: KV, key: SEEDED, value: true })
  await store.applyReplica([], { policy: 'pull', side })
}

/** Pushes the outbox in batches until it is empty. */
export async function pushAll(s: Replication, signal: AbortSignal): Promise<void> {
  for (;;) {
    const records = await outbox(s)
    setStatus(s, { pending: records.length })
    if (!records.length || signal.aborted) return
    const batch = coalesce(records.slice(0, s.batchSize))
    hold(s, batch)
    try {
      await pushBatch(s, batch)
    } finally {
      await unhold(s)
    }
  }
}

/**
 * Pushes a batch in outbox order, uploading each attachment's bytes at its place: after the
 * changes before it (its session exists on the server), before the changes after it (a
 * message referencing it). The attachment change itself rides in the next push (answered
 * `unchanged` once the upload put it there, or rejected if the upload was refused).
 */
async function pushBatch(s: Replication, batch: readonly Coalesced[]): Promise<void> {
  let start = 0
  for (let i = 0; i < batch.length; i++) {
    const c = batch[i].change
    if (c.type !== 'attachment') continue
    if (i > start) await pushJson(s, batch.slice(start, i))
    start = i
    await upload(s, c.session_id, c.attachment)
  }
  await pushJson(s, batch.slice(start))
}

/**
 * Pushes a run of mutations, in order, in pushes of at most `s.pushLimit` mutations. A push the
 * server refuses as too large (413: past its body or batch limit) is split in two and the halves
 * pushed one after the other, so parents still go before their children; the smaller size is kept
 * for the pushes after it. One mutation alone too large for the server is refused for good, like
 * any rejected change (`rejected$`, kept until acknowledged), not retried forever.
 */
async function pushJson(s: Replication, batch: readonly Coalesced[]): Promise<void> {
  for (let at = 0; at < batch.length;) {
    const part = batch.slice(at, at + s.pushLimit)
    if (await pushPart(s, part)) at += part.length
  }
}

/** One push; false when the server refused it as too large and `s.pushLimit` shrank below it. */
async function pushPart(s: Replication, part: readonly Coalesced[]): Promise<boolean> {
  const ids = part.map(({ id }) => id)
  const sentIn = s.generation
  let answer: unknown
  try {
    answer = await s.transport.push({
      client_id: s.clientId,
      mutations: part.map(({ id, change }) => ({ id, change })),
    })
  } catch (e) {
    if (!(e instanceof TransportError && e.status === 413)) throw e
    if (part.length > 1) {
      s.pushLimit = Math.ceil(part.length / 2)
      return false
    }
    const refused: PushResult = {
      id: part[0].id,
      status: 'rejected',
      code: 'session/invalid_request',
      message: `too large for the server on its own: ${e.message}`,
    }
    await serially(s, () => settle(s, part, [refused], sentIn))
    return true
  }
  const { results } = checkPush(answer, ids)
  // After the changes applied before it, before any after it: the held ones are sorted in order.
  await serially(s, () => settle(s, part, results, sentIn))
  return true
}

/** Acknowledges an answered batch, settles its conflicts and keeps its rejections, in one transaction. */
async function settle(
  s: Replication,
  batch: readonly Coalesced[],
  results: readonly PushResult[],
  sentIn: number,
): Promise<void> {
  const side: SideWrite[] = []
  const resolutions: ReplicaChange[] = []
  const settled: Conflict[] = []
  const refused: Rejection[] = []
  // One result per mutation, in order (checkPush made sure).
  for (const [i, m] of batch.entries()) {
    const r = results[i]
    placed(s, m.change, r.seq, sentIn)
    for (const id of m.ids) side.push({ store: OUTBOX, key: id, value: undefined })
    if (r.status === 'conflict' && m.change.type === 'entry') {
      const c = await resolve(s, m.change.session_id, m.change.entry, r.current)
      resolutions.push({ type: 'entry', session_id: c.session_id, entry: c.resolved })
      side.push(
        queued(
          { type: 'entry', session_id: c.session_id, entry: c.resolved, base_revision: r.current.revision },
          s.now(),
        ),
      )
      settled.push(c)
    } else if (r.status === 'rejected' || r.status === 'conflict') {
      const refusal = rejection(s, m, r)
      side.push(kept(refusal))
      refused.push(refusal)
    }
  }
  // Held server changes this answer settles: those at or past where the mutation landed (the
  // server's newer value), never the older ones. A local change not yet sent still shields.
  // Before the resolutions, which are written above the server's version.
  const { list: released, keep } = release(s)
  const list = released.length ? withoutPending(s, released, await outbox(s)) : []
  await s.store.applyReplica([...list, ...resolutions], { policy: 'pull', side })
  s.held = keep
  for (const c of settled) s.conflicts.next(c)
  for (const r of refused) s.rejected.next(r)
}

async function upload(s: Replication, session_id: string, attachment: AttachmentMeta): Promise<void> {
  const { transport } = s
  if (!transport.uploadAttachment) throw new TransportError('this transport cannot upload attachments', false)
  try {
    // Sealed at rest with the keys sync seals with: sent as stored, never opened nor held.
    if (await s.sealing?.uploadStored(session_id, attachment)) return
    const bytes = await s.store.getAttachmentBlob(session_id, attachment.attachment_id)
    // Deleted here since: its detach follows in the outbox; the push answers for it.
    if (!bytes) return
    await transport.uploadAttachment(session_id, attachment, bytes)
  } catch (e) {
    // Refused for good (no such session any more, too large): the push records the rejection.
    if (
      !(e instanceof TransportError && !e.retryable) &&
      !(e instanceof Error && (e as { retryable?: boolean }).retryable === false)
    )
      throw e
  }
}
