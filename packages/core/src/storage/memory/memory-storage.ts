import type { SessionEntry } from '../../model/model.js'
import { StaleHeadError, type SessionHead, type Storage, type WriteSet } from '../seam.js'

/** Storage kept in plain maps: for tests, server rendering and throwaway stores. */
export function memoryStorage(): Storage & { fail?: (error: unknown) => void } {
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
  return {
    name: 'memory',
    async open() {
      return [...heads.values()]
    },
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
