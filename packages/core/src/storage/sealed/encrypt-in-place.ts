import type { SessionEntry } from '../../model/model.js'
import type { KeySource } from '../../crypto/envelope.js'
import type { EncryptionPolicy } from '../../crypto/policy.js'
import { sealJson } from '../../crypto/envelope.js'
import { sealEntry } from '../../crypto/entry-seal.js'
import { sealMeta } from '../../crypto/meta-seal.js'
import { sealAttachmentData, sealAttachmentMeta } from '../../crypto/attachment-seal.js'
import type { Json } from '../../model/model.js'
import type { BlobWrite, SessionHead, SideWrite, Storage } from '../seam.js'
import { RESERVED_SIDE_KEY, sideContext } from './sealed-storage.js'

/**
 * The side key that marks an encryption in place under way: written with the keyring before the
 * first session is sealed, deleted with the last side record sealed. A store opened while it is
 * there finishes the job first.
 */
export const ENCRYPTING_KEY = 'colloquy:encrypting'

/** A head record still in clear: its title is a string (sealed, it is `{ rev, box }`). */
const isClear = (head: SessionHead): boolean => typeof (head.meta as { title?: unknown }).title === 'string'
/** An entry record still in clear (sealed, its content is a `box`). */
const isClearEntry = (e: SessionEntry): boolean => !('box' in e)

/** Every head on disk, a page at a time where the storage pages (none kept). */
async function* headsOf(storage: Storage): AsyncIterable<SessionHead> {
  const paged = storage.paged
  if (!paged) {
    yield* await storage.open()
    return
  }
  let after: { k: number; id: string } | undefined
  for (;;) {
    const page = await paged.page({ order: 'created_asc', limit: 100, ...(after && { after }) })
    yield* page
    if (page.length < 100) return
    const last = page[page.length - 1].meta
    after = { k: last.created_at, id: last.session_id }
  }
}

/**
 * Seals every record of a store written in clear, one session per transaction (its head, entries
 * and attachment bytes together), then the side records. Resumable: a session is sealed whole
 * or not at all, sessions already sealed are skipped, and the marker (`ENCRYPTING_KEY`) is
 * deleted only with the last write, so a store opened after a crash midway finishes the job.
 * `progress` is told how many sessions are sealed so far (a throw stops the job there, as a
 * crash would).
 */
export async function encryptInPlace(
  storage: Storage,
  keys: KeySource,
  policy: EncryptionPolicy | undefined,
  progress?: (sealed: number) => void,
): Promise<void> {
  let done = 0
  for await (const head of headsOf(storage)) {
    if (!isClear(head)) continue
    const id = head.meta.session_id
    const entries = await storage.entries(id)
    const sealedEntries = new Map<string, SessionEntry>()
    for (const e of entries)
      sealedEntries.set(
        e.id,
        isClearEntry(e) ? ((await sealEntry(keys, id, e, 'bytes')) as unknown as SessionEntry) : e,
      )
    const blobs: BlobWrite[] = []
    for (const a of head.attachments ?? []) {
      const bytes = await storage.attachmentBytes?.(id, a.attachment_id)
      if (!bytes) continue
      blobs.push({
        op: 'put',
        session_id: id,
        attachment_id: a.attachment_id,
        bytes: await sealAttachmentData(keys, id, a.attachment_id, bytes),
      })
    }
    const attachments =
      head.attachments && (await Promise.all(head.attachments.map((a) => sealAttachmentMeta(keys, a))))
    const sealedHead = {
      meta: await sealMeta(keys, head.meta, { ...(policy && { policy }) }),
      leaf: head.leaf,
      // A version of its own: a copy of the clear head held elsewhere is stale.
      v: head.v + 1,
      ...(attachments && { attachments }),
    } as unknown as SessionHead
    await storage.transact(async (r) => {
      // The head must still be the one read (nothing else writes while the store opens; a tab
      // of older code could): otherwise the transaction aborts and the next open starts again.
      r.expect?.(id, (disk) => disk !== undefined && disk.v === head.v && isClear(disk), { head })
      return {
        deleted: new Set(),
        heads: new Map([[id, sealedHead]]),
        entries: new Map([[id, sealedEntries]]),
        side: [],
        blobs,
      }
    })
    progress?.(++done)
  }
  // Side records (sync's outbox and checkpoints) last, with the marker's deletion.
  const side: SideWrite[] = []
  for (const store of ['outbox', 'kv']) {
    for (const { key, value } of (await storage.sideRecords?.(store)) ?? []) {
      if (typeof key === 'string' && RESERVED_SIDE_KEY.test(key)) continue
      if (typeof (value as { $sealed?: unknown } | null)?.$sealed === 'string') continue
      side.push({
        store,
        key,
        value: { $sealed: await sealJson(keys, value as Json, sideContext(store, key)) },
      })
    }
  }
  side.push({ store: 'kv', key: ENCRYPTING_KEY, value: undefined })
  await storage.transact(async () => ({ deleted: new Set(), heads: new Map(), entries: new Map(), side }))
}
