import type { SessionEntry } from '../../model/model.js'
import { compareFor, positionOf } from '../../model/order.js'
import { randomToken } from '../../util/random-token.js'
import { StaleHeadError, type PagedReads, type SessionHead, type Storage, type WriteSet } from '../seam.js'

export interface MemoryStorageOptions {
  /**
   * Serve heads on demand (`Storage.paged`) instead of all of them at open, as IndexedDB does:
   * the engine then holds a bounded working set of heads over this storage too.
   */
  paged?: boolean
}

/** Storage kept in plain maps: for tests, server rendering and throwaway stores. */
export function memoryStorage(
  options: MemoryStorageOptions = {},
): Storage & { fail?: (error: unknown) => void } {
  const heads = new Map<string, SessionHead>()
  const entries = new Map<string, Map<string, SessionEntry>>()
  const side = new Map<string, Map<string | number, unknown>>()
  /** Attachment bytes by session, then attachment id. */
  const blobs = new Map<string, Map<string, Blob>>()
  let nextFailure: unknown
  let autoKey = 0
  const apply = (w: WriteSet): void => {
    // Copies read their source before this commit's deletions (a fork of a session deleted in
    // the same batch still gets the bytes).
    const copies = (w.blobs ?? []).flatMap((b) =>
      b.op === 'copy' ? [[b, blobs.get(b.from_session_id)?.get(b.attachment_id)] as const] : [],
    )
    for (const id of w.deleted) {
      heads.delete(id)
      entries.delete(id)
      blobs.delete(id)
    }
    for (const [id, head] of w.heads) heads.set(id, head)
    for (const [id, batch] of w.entries) {
      let map = entries.get(id)
      if (!map) entries.set(id, (map = new Map()))
      for (const [eid, e] of batch) map.set(eid, e)
    }
    const held = (id: string): Map<string, Blob> => blobs.get(id) ?? blobs.set(id, new Map()).get(id)!
    for (const b of w.blobs ?? []) {
      if (b.op === 'put') held(b.session_id).set(b.attachment_id, b.bytes)
      else if (b.op === 'delete') blobs.get(b.session_id)?.delete(b.attachment_id)
    }
    for (const [b, bytes] of copies) if (bytes) held(b.session_id).set(b.attachment_id, bytes)
    for (const s of w.side) {
      let map = side.get(s.store)
      if (!map) side.set(s.store, (map = new Map()))
      if (s.value === undefined) map.delete(s.key!)
      else map.set(s.key ?? ++autoKey, structuredClone(s.value))
    }
  }
  const paged: PagedReads = {
    head: async (id) => heads.get(id),
    async page(q) {
      const cmp = compareFor(q.order)
      const passes = (h: SessionHead): boolean =>
        (q.status == null || h.meta.status === q.status) &&
        (q.kinds == null || q.kinds.includes(h.meta.kind)) &&
        (!q.after || cmp(positionOf(h.meta, q.order), q.after) > 0)
      const sorted = [...heads.values()]
        .filter(passes)
        .sort((a, b) => cmp(positionOf(a.meta, q.order), positionOf(b.meta, q.order)))
      const out: SessionHead[] = []
      for (const h of sorted) {
        if (out.length >= q.limit) break
        if (!q.accept || q.accept(h.meta)) out.push(h)
      }
      return out
    },
  }
  return {
    // Its own database: a name no other memory storage shares, in this tab or another, so the
    // relay, sync's leader lock and the reply and import locks never join two of them.
    name: `memory:${randomToken()}`,
    async open() {
      return options.paged ? [] : [...heads.values()]
    },
    ...(options.paged && { paged }),
    async entries(id) {
      return [...(entries.get(id)?.values() ?? [])]
    },
    async transact(work) {
      const checks: Array<readonly [string, (disk: SessionHead | undefined) => boolean]> = []
      const writes = await work({
        head: async (id) => heads.get(id),
        entries: async (id) => [...(entries.get(id)?.values() ?? [])],
        expect: (id, ok) => void checks.push([id, ok]),
      })
      // Checked right before the writes, in the same synchronous step: nothing can come between.
      for (const [id, ok] of checks) if (!ok(heads.get(id))) throw new StaleHeadError(id)
      if (nextFailure !== undefined) {
        const error = nextFailure
        nextFailure = undefined
        throw error
      }
      apply(writes)
    },
    async attachmentBytes(session_id, attachment_id) {
      return blobs.get(session_id)?.get(attachment_id)
    },
    async sideRecords(store) {
      const map = side.get(store)
      if (!map) return []
      return [...map.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, value]) => ({ key, value }))
    },
    close() {},
    /** Test hook: the next commit fails with `error` and writes nothing. */
    fail(error) {
      nextFailure = error
    },
  }
}
